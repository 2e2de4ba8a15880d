#!/usr/bin/env bash
# Issue 15, one device call: bench/vs_torch.py with the strongest PyTorch rows
# (torch.compile + fused SGD + CUDA graph; tf32; bf16 autocast) beside eager and
# the epoch graph, every ffnn strategy incl. cublaslt, and the two larger cases
# (784-4096x3-10 at batch 4096; the deep narrow 784-128x8-10 at batch 1024, lr 0.01).
#   bash bench/issue15_device.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: issue15_device.sh DATA_DIR}
OUT=${OUT:-issue15-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' build/ffnn > "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
S=auto,persistent,graph,fused,cublas,cublaslt,auto:tf32,graph:tf32,cublas:tf32,cublaslt:tf32,auto:bf16,graph:bf16,cublas:bf16,cublaslt:bf16
T=eager,epoch_graph,compile_graph,compile_graph:tf32,compile_graph:bf16
python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --strategy $S --torch-modes $T --epochs 5 \
    --configs 784-256relu-10:64,784-256relu-10:256,784-256relu-10:1024,784-1024relu-1024relu-10:1024,784-4096relux3-10:4096 \
    --out "$OUT/vs_torch.json" 2> "$OUT/vs_torch.err" | tee "$OUT/vs_torch.md"
python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --strategy $S --torch-modes $T --epochs 5 \
    --lr 0.01 --configs 784-128relux8-10:1024 --out "$OUT/vs_torch_deep.json" \
    2> "$OUT/vs_torch_deep.err" | tee "$OUT/vs_torch_deep.md"
grep -v "Warning\|warn\|^ *$\|return Variable" "$OUT"/vs_torch*.err | tail -20
