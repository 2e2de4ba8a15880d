#!/usr/bin/env bash
# One device call: build for the GPU, run every test (GPU tests included), then the
# seed-000 accuracy/speed runs for docs/RESULTS.md. Usage on the device machine:
#   bash bench/device_run.sh DATA_DIR [tests|results|all]
# Writes logs and JSON lines under $OUT (or ./device-out).
set -uo pipefail
DATA=${1:?usage: device_run.sh DATA_DIR [tests|results|all]}
WHAT=${2:-all}
OUT=${OUT:-device-out}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
lscpu | grep -E 'Model name|^CPU\(s\)' | tee -a "$OUT/gpu.txt"
# the device has no libcjson-dev: carry .devdata/cjson (headers + libcjson.so, copied
# from this machine's /usr/include/cjson and /usr/lib/x86_64-linux-gnu/libcjson.so*)
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all build/ffnn_tests \
    > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }

if [ "$WHAT" = tests ] || [ "$WHAT" = all ]; then
    # the tests read Fashion-MNIST from Debian's path
    mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
    # the torch parity tests use the device's python3 (PyTorch 2.11 + numpy)
    FFNN_PYTHON=$(command -v python3) build/ffnn_tests 2>&1 | tee "$OUT/tests.log"
    # the PyTorch twin against the cuda backend (TF32 off), tolerance 1e-4
    for c in seed000 seed003 seed001; do
        python3 tests/torch_twin.py $c --ffnn build/ffnn --data "$DATA" --device cuda 2>&1 |
            tee -a "$OUT/twin_cuda.log"
    done
fi

if [ "$WHAT" = results ] || [ "$WHAT" = all ]; then
    : > "$OUT/results.jsonl"
    run() { # device kernels lr seed   (kernels "-" for cpu)
        local kflag=$2; [ "$2" = - ] && kflag=tiled
        build/ffnn train --data "$DATA" --arch 784-256relu-10 --batch 64 --epochs 10 \
            --device "$1" --strategy "$kflag" --lr "$3" --seed "$4" --json 2>/dev/null |
            sed "s/^{/{\"device\": \"$1\", \"kernels\": \"$2\", \"lr\": $3, \"seed\": $4, /" \
            >> "$OUT/results.jsonl"
    }
    for k in naive tiled; do for lr in 0.01 0.1; do for s in 1 2 3; do
        run cuda $k $lr $s
    done; done; done
    # cpu runs in parallel processes (one core each) on the device's CPU
    for lr in 0.01 0.1; do for s in 1 2 3; do
        ( run cpu - $lr $s ) &
    done; done
    wait
    python3 bench/summarize_results.py "$OUT/results.jsonl" | tee "$OUT/summary.md"
fi
