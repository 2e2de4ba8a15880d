#!/usr/bin/env bash
# --strategy tune on the GPU in one call: build for sm_90, the strategy tests (tune's
# own, every strategy against the cpu reference, the golden bits), three fresh
# processes of tune at batch 1024 beside cublaslt and graph (does the pick made in
# the trials hold in the run?), then bench/vs_torch.py rows with auto, tune and the
# strategies it measures, beside torch.compile + CUDA graph.
#   [RUN_TESTS=0] [RUN_BENCH=0] bash bench/tune_pick.sh DATA_DIR
# Feeds the --strategy tune row of docs/RESULTS.md "Training speed on the GPU".
set -uo pipefail
DATA=${1:?usage: tune_pick.sh DATA_DIR}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all build/ffnn_tests \
    > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
[ "${RUN_TESTS:-1}" = 0 ] || build/ffnn_tests strategies golden 2>&1 | tee "$OUT/tests.log" | grep -v "^PASS"
[ "${RUN_BENCH:-1}" = 0 ] && exit 0
for i in 1 2 3; do
    for s in tune cublaslt graph; do
        build/ffnn train --data "$DATA" --arch 784-256relu-10 --batch 1024 --epochs 6 \
            --device cuda --strategy $s --json 2>"$OUT/err_${s}_$i.txt" > "$OUT/run_${s}_$i.jsonl"
        ms=$(python3 -c "import json,sys,statistics; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{\"epoch')]; print('%.2f' % (1000*statistics.median(x['seconds'] for x in r[1:])))" "$OUT/run_${s}_$i.jsonl")
        echo "process $i $s: median ms/epoch (epochs 2-6) $ms; $(grep -h 'tune:' "$OUT/err_${s}_$i.txt")"
    done
done
python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn \
    --configs 784-256relu-10:64,784-256relu-10:256,784-256relu-10:1024,784-1024relu-1024relu-10:1024 \
    --kernels auto,tune,persistent,graph,cublas,cublaslt --torch-modes compile_graph --epochs 5 \
    --out "$OUT/vs_torch_tune.json" 2>&1 | tee "$OUT/vs_torch_tune.md" | grep -E "^\||tune:"
