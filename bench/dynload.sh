#!/bin/sh
# dynload.sh - the CUDA module (docs/BUILD.md "The CUDA and MPI modules") as the
# binaries of a CUDA build meet it, on a machine with a GPU: what each file needs
# (readelf NEEDED), the CLI's peak RSS and time at --help and for a short training
# run on cuda and auto (the module found beside build/ffnn, no variable set), the
# message without the module, and the test suites that go through it.
#   sh bench/dynload.sh          (after make; BUILD=DIR for another build folder)
set -eu
build=${BUILD:-build}
[ -x "$build/ffnn" ] && [ -f "$build/libffnn-cuda.so" ] ||
    { echo "dynload.sh: no $build/ffnn or $build/libffnn-cuda.so: run make with CUDA" >&2; exit 2; }
for f in "$build/libffnn.so" "$build/ffnn" "$build/libffnn-cuda.so"; do
    echo "$f NEEDED: $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
done
rss() { # rss LABEL CMD...: the median of 3 runs' peak RSS (MB) and wall time (s)
    label=$1
    shift
    for i in 1 2 3; do /usr/bin/time -f "%M %e" "$@" 2>&1 >/dev/null | tail -1; done |
        sort -n | sed -n 2p | awk -v l="$label" '{ printf "%-34s %8.1f MB %6.2f s\n", l, $1 / 1024, $2 }'
}
train="train --data synth:points:20000 --arch 2-256relu-256relu-2 --epochs 3"
rss "ffnn --help" "$build/ffnn" --help
rss "ffnn $train --device cpu" "$build/ffnn" $train --device cpu
rss "ffnn $train --device cuda" "$build/ffnn" $train --device cuda
rss "ffnn $train --device auto" "$build/ffnn" $train --device auto
echo "device lines:"
"$build/ffnn" $train --device cuda 2>&1 | grep "device:\|cuda:" || true
"$build/ffnn" $train --device auto | grep "device:" || true
echo "without the module (FFNN_CUDA_MODULE=/nonexistent/libffnn-cuda.so):"
FFNN_CUDA_MODULE=/nonexistent/libffnn-cuda.so "$build/ffnn" $train --device cuda 2>&1 | tail -1 || true
FFNN_CUDA_MODULE=/nonexistent/libffnn-cuda.so "$build/ffnn" $train --device auto | grep "device:" || true
echo "tests:"
FFNN_BIN="$build/ffnn" FFNN_FAULTS_LIB="$(cd "$build" && pwd)/libffnn_faults.so" \
    "$build/ffnn_tests" module_ golden_ parallel_gpu examples_run python_pytest 2>&1 | tail -1
