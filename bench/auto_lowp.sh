#!/usr/bin/env bash
# auto's rule for tf32/bf16 below batch 512 (our tensor-core kernels under graph):
# 784-256relu-10 at batch 64, 256 and 1024, auto:tf32/bf16 beside graph, cublas and
# cublaslt in the same precision and torch.compile + graph, one device call:
#   bash bench/auto_lowp.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: auto_lowp.sh DATA_DIR}
OUT=${OUT:-auto-lowp-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' build/ffnn > "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --epochs 5 --ceilings "${CEILINGS:-measure}" \
    --strategy auto:tf32,graph:tf32,cublas:tf32,cublaslt:tf32,auto:bf16,graph:bf16,cublas:bf16,cublaslt:bf16 \
    --torch-modes compile_graph:tf32,compile_graph:bf16 \
    --configs 784-256relu-10:64,784-256relu-10:256,784-256relu-10:1024 \
    --out "$OUT/auto_lowp.json" 2> "$OUT/auto_lowp.err" | tee "$OUT/auto_lowp.md"
grep -v "Warning\|warn\|^ *$" "$OUT/auto_lowp.err" | tail -5
