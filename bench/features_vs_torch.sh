#!/usr/bin/env bash
# Issue 12's device call: build for sm_90, the new tests on the GPU (the cuda op
# parity, every strategy with the features, the cuda resume with them, the twin on
# cuda at 1e-4), then the schedule / AdamW / clipped / dropout runs against PyTorch
# on Fashion-MNIST over 3 seeds (bench/features_vs_torch.py).
#   bash bench/features_vs_torch.sh DATA_DIR [epochs, default 10]
set -uo pipefail
DATA=${1:?usage: features_vs_torch.sh DATA_DIR [EPOCHS]}; E=${2:-10}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all build/ffnn_tests \
    > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
FFNN_PYTHON=$(command -v python3) build/ffnn_tests cuda_optimizer_update cuda_activations \
    cuda_clip_dropout_ema features_ resume_cuda golden strategies_ 2>    cuda_clip_dropout_ema features_ resume_cuda golden strategies_ fused_ cublas_ 2>&11 | grep -v "^PASS" |
    tee "$OUT/tests_issue12.log"
for c in wd_momentum adamw sched_step_warmup sched_cosine clip_norm clip_value ema dropout0 \
    activations activations_params activations_gelu activations_mish; do
    python3 tests/torch_twin.py $c --ffnn build/ffnn --data "$DATA" --device cuda
done 2>&1 | tee "$OUT/twin_cuda.log"
python3 bench/features_vs_torch.py "$DATA" --ffnn build/ffnn --epochs "$E" --seeds 1 2 3 \
    --out "$OUT/features_vs_torch.jsonl" 2>&1 | tee "$OUT/features_vs_torch.md"
