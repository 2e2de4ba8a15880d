#!/usr/bin/env bash
# Where does the process-to-process spread of the cuBLAS rows come from? Runs the
# same training command in 6 fresh processes per system (ffnn cublas, ffnn cublaslt,
# ffnn graph, PyTorch epoch graph via vs_torch.py), batch 1024, 784-256-10, with the
# GPU's SM clock sampled every 100 ms alongside. Prints per-process medians.
#   bash bench/variance_probe.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: variance_probe.sh DATA_DIR}
OUT=${OUT:-variance-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' build/ffnn > "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv -lms 100 > "$OUT/clocks.csv" &
SMI=$!
med() { python3 -c "import sys,json,statistics;r=[json.loads(l) for l in sys.stdin if l.startswith('{')];t=[1e3*x['seconds'] for x in r[1:]];print(f'{statistics.median(t):.2f} (min {min(t):.2f} max {max(t):.2f})')"; }
for i in 1 2 3 4 5 6; do
    for s in cublas cublaslt graph; do
        echo "$s run $i: $(build/ffnn train --data "$DATA" --arch 784-256relu-10 --batch 1024 --epochs 8 --device cuda --strategy $s --json --seed 1 | med)"
    done
    python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --strategy cublas --torch-modes epoch_graph --configs 784-256relu-10:1024 --epochs 7 --ceilings 51,411,800 --out "$OUT/t$i.json" 2>/dev/null | awk -F'|' -v i=$i '/torch/ {print "torch epoch_graph run " i ": " $6} /ffnn/ {print "ffnn cublas (under vs_torch) run " i ": " $6}'
done
kill $SMI
python3 - "$OUT/clocks.csv" <<'PY'
import sys, collections
rows=[l.strip().split(", ") for l in open(sys.argv[1]) if l[0].isdigit()]
sm=collections.Counter(r[1] for r in rows)
print("SM clock samples:", sm.most_common(6))
mem=collections.Counter(r[2] for r in rows); print("mem clock:", mem.most_common(3))
PY
