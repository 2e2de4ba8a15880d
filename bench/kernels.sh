#!/usr/bin/env bash
# The matmul kernel lab in one device call: build for sm_90, run the fused-kernel
# tests (suite "fused"), then `ffnn bench kernels` (naive / tiled / transposed /
# register-blocked / fused / cuBLAS, each checked against the CPU reference, then
# timed). On the device machine:
#   bash bench/kernels.sh [more options of ffnn bench kernels, e.g. --quick]
# Writes under $OUT (or ./device-out): kernels.csv, kernels_table.md, gpu.txt,
# build.log, tests.log, bench.log. Copy kernels.csv and kernels_table.md to
# bench/results/ (kernels.csv, kernels.md).
# Budget: build ~1-2 min, tests ~20 s, lab ~1-2 min (4096^3 naive dominates).
set -uo pipefail
OUT=${OUT:-device-out}
BUILD=${BUILD:-build-fused}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
T0=$(date +%s)

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv |
    tee "$OUT/gpu.txt"
# the device has no libcjson-dev: carry .devdata/cjson (see bench/device_run.sh)
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j16 BUILD="$BUILD" $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all \
    "$BUILD/ffnn_tests" > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - T0 )) s"

"$BUILD/ffnn_tests" fused 2>&1 | tee "$OUT/tests.log" | tail -15
trc=${PIPESTATUS[0]}

# progress lines (stderr) go to bench.log; the table (stdout) is printed last
timeout 240 "$BUILD/ffnn" bench kernels --out "$OUT" "$@" 2> "$OUT/bench.log"
rc=$?
[ $rc -eq 0 ] || { echo "ffnn bench kernels exited with $rc; bench.log:"; tail -40 "$OUT/bench.log"; }
echo "total: $(( $(date +%s) - T0 )) s, tests exit $trc, lab exit $rc"
[ $trc -eq 0 ] && [ $rc -eq 0 ]
