#!/usr/bin/env bash
# Issue 4 in one device call: build for sm_90, the grid-barrier cost, the persistent
# kernel's per-phase profile, ffnn's strategies against PyTorch (bench/vs_torch.py ->
# bench/results/vs_torch.json), and the accuracy of every strategy and precision
# (bench/strategies_accuracy.sh). Usage on the device machine:
#   bash bench/vs_torch.sh DATA_DIR [accuracy seeds, default 3]
set -uo pipefail
DATA=${1:?usage: vs_torch.sh DATA_DIR [N]}; N=${2:-3}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all \
    > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
{
    build/ffnn bench barrier --iters 20000
    for b in 64 256 1024; do
        FFNN_PERSISTENT_PROFILE=1 build/ffnn train --data "$DATA" --arch 784-256relu-10 \
            --batch $b --epochs 1 --lr 0.1 --strategy persistent 2>&1 | grep -v "^data\|^arch"
    done
} 2>&1 | tee "$OUT/barrier_profile.txt"
python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --out "$OUT/vs_torch.json" 2>&1 |
    tee "$OUT/vs_torch.md"
bash bench/strategies_accuracy.sh "$DATA" "$N" 2>&1 | tee "$OUT/accuracy.md"
# the auto rule's batch limits: batch 512 on the seed-000 net
for k in persistent graph fused cublas; do
    build/ffnn train --data "$DATA" --arch 784-256relu-10 --batch 512 --epochs 6 --lr 0.1 \
        --strategy $k --json 2>/dev/null | tail -5 | python3 -c "
import json, statistics, sys
r = [json.loads(l) for l in sys.stdin]
print('batch 512 %-10s %.2f ms/epoch (median of 5 after a warm-up)' % (sys.argv[1],
      1e3 * statistics.median(x['seconds'] for x in r)))" $k
done 2>&1 | tee "$OUT/batch512.txt"
# seed 001's whole regression run with every strategy
bash bench/seed001_strategies.sh 2>&1 | tee "$OUT/seed001_strategies.md"
