#!/usr/bin/env bash
# sanitize_cuda.sh - the CUDA tests under compute-sanitizer: memcheck (out-of-bounds
# and misaligned accesses, leaks), racecheck (shared-memory hazards), synccheck
# (illegal __syncthreads / warp sync) and initcheck (reads of uninitialised device
# memory). Run on a machine with a GPU, from the repository root, after building:
#
#   make BUILD=build CUDA_ARCH="-gencode arch=compute_90,code=sm_90" -j all build/ffnn_tests
#   tools/sanitize_cuda.sh [BUILD_DIR] [TOOL ...]        # default: build, all four tools
#   OUT=dir tools/sanitize_cuda.sh build memcheck          # logs into dir (default: $OUT or
#                                                          # build/sanitize)
#
# The tests run are those that launch kernels (names containing cuda, fused_, cublas_,
# strategies_, golden_cuda; tests/main.c runs the names matching any filter given);
# SANITIZE_TESTS overrides the filters, e.g. SANITIZE_TESTS="cuda_dense fused_act".
# racecheck and initcheck slow kernels 10-100x: they run with FFNN_TEST_QUICK=1 (the
# same kernels on fewer shapes and steps; SANITIZE_FULL=1 turns that off), and
# SANITIZE_TIMEOUT (seconds per tool, default 600) bounds each run (a run cut short
# reports exit 124). Within a 10-minute
# device call, the op-level tests under all four tools:
#   SANITIZE_TESTS="cuda_ fused_ cublas_ local1d_cuda" SANITIZE_TIMEOUT=140 \
#       tools/sanitize_cuda.sh build
# and the strategies (whole training steps, persistent and graph kernels) in a second:
#   SANITIZE_TESTS="strategies_ golden_cuda" SANITIZE_TIMEOUT=140 tools/sanitize_cuda.sh build Each tool's log ends with compute-sanitizer's
# "ERROR SUMMARY"; the script prints one line per tool and exits 1 when any tool
# reported an error or a test failed. Results go to docs/RESULTS.md ("compute-sanitizer").
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
TOOLS=("$@")
[ ${#TOOLS[@]} -eq 0 ] && TOOLS=(memcheck racecheck synccheck initcheck)
OUTDIR=${OUT:-$BUILD/sanitize}
mkdir -p "$OUTDIR"
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
TIMEOUT=${SANITIZE_TIMEOUT:-600}
read -r -a FILTERS <<< "${SANITIZE_TESTS:-cuda fused_ cublas_ strategies_ golden_cuda}"
if [ ! -x "$SAN" ]; then echo "compute-sanitizer not found (set COMPUTE_SANITIZER)"; exit 2; fi
if [ ! -x "$BUILD/ffnn_tests" ]; then echo "$BUILD/ffnn_tests not built"; exit 2; fi
export FFNN_BIN=$BUILD/ffnn
status=0
for tool in "${TOOLS[@]}"; do
    extra=() quick=
    case $tool in
        memcheck) extra=(--leak-check full) ;;
        racecheck) extra=(--racecheck-report all) quick=1 ;;
        initcheck) quick=1 ;;
    esac
    # the slow tools: the same kernels on fewer shapes and steps (tests/test_parity.h)
    [ -n "${SANITIZE_FULL:-}" ] && quick=
    log=$OUTDIR/$tool.log
    start=$(date +%s)
    FFNN_TEST_QUICK=$quick timeout "$TIMEOUT" "$SAN" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
        --target-processes all --print-limit 50 \
        "$BUILD/ffnn_tests" "${FILTERS[@]}" > "$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1)
    tests=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | cut -c1-60)
    echo "$tool: exit $rc in ${secs} s; ${summary:-no ERROR SUMMARY line}; tests: ${tests:-none}"
    [ $rc -ne 0 ] && status=1
done
exit $status
