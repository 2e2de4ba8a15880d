#!/usr/bin/env bash
# The tensor-core kernel (src/backend/cuda/gemm_mma.cu) on the GPU in one call: build
# for sm_90, its tests (every epilogue and shape vs the cpu, 200 training steps of
# fused/graph in tf32 and bf16 vs the cpu reference), the kernel lab's tensor-core
# rows beside cuBLAS and the old wmma kernel, then the wide net trained with graph
# and cublaslt in tf32 and bf16 (6 epochs, median of epochs 2-6).
#   [RUN_TESTS=0] [RUN_LAB=0] [RUN_TRAIN=0] bash bench/mma_device.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: mma_device.sh DATA_DIR}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all build/ffnn_tests \
    > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
if [ "${RUN_TESTS:-1}" != 0 ]; then
    timeout ${TEST_LIMIT:-100} build/ffnn_tests ${TESTS:-fused_tf32 fused_bf16 cublas_precision_strategy_rule strategies_fused_graph_tf32} \
        > "$OUT/tests.log" 2>&1
    grep -v "^PASS" "$OUT/tests.log" | tail -40
fi
if [ "${RUN_LAB:-1}" != 0 ]; then
    timeout ${LAB_LIMIT:-120} build/ffnn bench kernels --repeats ${REPEATS:-10} --out "$OUT/lab" \
        --variants ${VARIANTS:-regblock,cublas,wmma_tf32,mma_tf32_128w4,mma_tf32_64,cublas_tf32,mma_bf16_128w4,mma_bf16_64,cublas_bf16} \
        > "$OUT/lab.log" 2>&1
    grep -E "FAIL|error|^layer" "$OUT/lab.log" | head -20
    sed -n '/^| layer | op | M x N x K/,/^$/p' "$OUT/lab/kernels_table.md"
fi
if [ "${RUN_TRAIN:-1}" != 0 ]; then
    for p in tf32 bf16; do
        for s in ${TRAIN_STRATEGIES:-graph cublaslt}; do
            build/ffnn train --data "$DATA" --arch 784-1024relu-1024relu-10 --batch 1024 \
                --epochs 6 --device cuda --strategy $s --precision $p --json \
                2>"$OUT/err_${s}_$p.txt" > "$OUT/run_${s}_$p.jsonl"
            python3 -c "
import json,sys,statistics
L=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]
r=[x for x in L if 'epoch' in x]; t=[x for x in L if 'test_accuracy' in x]
print('$s $p: median ms/epoch (epochs 2-6) %.2f, last train_loss %.4f, test accuracy %s' % (1000*statistics.median(x['seconds'] for x in r[1:]), r[-1]['train_loss'], t[-1]['test_accuracy'] if t else '-'))" \
                "$OUT/run_${s}_$p.jsonl" || tail -3 "$OUT/err_${s}_$p.txt"
        done
    done
fi
