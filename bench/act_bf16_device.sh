#!/usr/bin/env bash
# Issue 15d: the 16-byte f' kernel of the bf16 backward (elementwise.cu
# activation_backward_bf16x8_kernel), before and after in one device call:
#   build  this tree and BASE's build/ffnn side by side (mixed_device.sh)
#   tests  build/ffnn_tests cublaslt mixed fused_ golden_cuda
#   time   784-4096relu-4096relu-4096relu-10, batch 4096, 4 epochs, cublaslt bf16:
#          BASE and this tree interleaved, twice (ms/epoch = median of epochs 2-4 of
#          60000 / img/s)
#   prof   ncu: each kernel of one step of that net (mixed_device.sh's prof part)
# usage (device, from this tree's root):
#   BASE=../15d-base OUT=$OUT bash bench/act_bf16_device.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: act_bf16_device.sh DATA_DIR}
export PART=${PART:-build tests time prof}
export TESTS=${TESTS:-cublaslt mixed fused_ golden_cuda}
export TIME_CONFIGS=${TIME_CONFIGS:-784-4096relu-4096relu-4096relu-10 4096 4 cublaslt bf16}
exec bash "$(dirname "$0")/mixed_device.sh" "$DATA"
