#!/usr/bin/env bash
# The session's device checks in one call (parts chosen by PARTS, default all):
#   tests     build for sm_90, the whole suite (build/ffnn_tests $TEST_FILTER: e.g.
#             -torch_parity_cpu leaves out the cpu twin, which CI runs)
#   dp        bench/dp_device.sh (NCCL data parallelism on one GPU)
#   sanitize  tools/sanitize_cuda.sh over a subset of the cuda tests
#   features  bench/features_vs_torch.sh (issue 12: the twin on cuda, the runs vs PyTorch)
#   cliff     bench/graph_cliff.sh (the graph cache past 128 launches per epoch)
#   accuracy  bench/precision_accuracy.sh (tf32/bf16 against fp32, 3 seeds)
#   vs_torch  bench/issue15_device.sh (every strategy and precision against the
#             strongest PyTorch; its own build of build/ffnn)
#   PARTS="tests dp" bash bench/session_device.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: session_device.sh DATA_DIR}
OUT=${OUT:-session-out}; mkdir -p "$OUT"
PARTS=${PARTS:-tests dp sanitize features}
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
if has tests || has sanitize; then
    make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' all build/ffnn_tests \
        build/libffnn_faults.so examples > "$OUT/build.log" 2>&1 ||
        { tail -40 "$OUT/build.log"; exit 1; }
    grep -m1 "ffnn build" "$OUT/build.log"
fi
if has tests; then
    start=$(date +%s)
    FFNN_BIN=build/ffnn FFNN_FAULTS_LIB=$PWD/build/libffnn_faults.so \
        FFNN_MAKE_ARGS="$CJSON" \
        FFNN_PYTHON=$(command -v python3) timeout ${TESTS_TIMEOUT:-1800} build/ffnn_tests ${TEST_FILTER:-} \
        > "$OUT/tests.log" 2>&1
    echo "tests ($(( $(date +%s) - start )) s): $(tail -1 "$OUT/tests.log" | cut -c1-400)"
    grep -E "^FAIL" -A4 "$OUT/tests.log" | head -60
    grep -E "worst relative|largest" "$OUT/tests.log" | head -40 > "$OUT/tests_numbers.txt"
fi
if has dp; then
    OUT="$OUT/dp" timeout 300 bash bench/dp_device.sh "$DATA" > "$OUT/dp.log" 2>&1
    echo "dp_device (rc $?):"; tail -25 "$OUT/dp.log"
fi
if has features; then
    OUT="$OUT/features" timeout ${FEATURES_TIMEOUT:-400} bash bench/features_vs_torch.sh "$DATA" \
        ${FEATURES_EPOCHS:-10} > "$OUT/features.log" 2>&1
    echo "features_vs_torch (rc $?):"; grep -E "FAIL|worst|^\|" "$OUT/features.log" | tail -40
fi
if has cliff; then
    make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' build/ffnn > "$OUT/build_cliff.log" 2>&1 ||
        { tail -40 "$OUT/build_cliff.log"; exit 1; }
    OUT="$OUT/cliff" timeout ${CLIFF_TIMEOUT:-200} bash bench/graph_cliff.sh > "$OUT/cliff.log" 2>&1
    echo "graph_cliff (rc $?):"; cat "$OUT/cliff.log"
fi
if has accuracy; then
    make -j16 $CJSON CUDA_ARCH='-gencode arch=compute_90,code=sm_90' build/ffnn > "$OUT/build_acc.log" 2>&1 ||
        { tail -40 "$OUT/build_acc.log"; exit 1; }
    timeout ${ACCURACY_TIMEOUT:-300} bash bench/precision_accuracy.sh "$DATA" > "$OUT/accuracy.md" 2>&1
    echo "precision_accuracy (rc $?):"; cat "$OUT/accuracy.md"
fi
if has vs_torch; then
    OUT="$OUT/vs_torch" timeout ${VS_TORCH_TIMEOUT:-480} bash bench/issue15_device.sh "$DATA" \
        > "$OUT/vs_torch.log" 2>&1
    echo "issue15_device (rc $?):"; grep -v "^ *$" "$OUT/vs_torch.log" | tail -60
fi
if has sanitize; then
    OUT="$OUT/sanitize" SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-100} \
        SANITIZE_TESTS="${SANITIZE_TESTS:-cuda_dense cuda_activations cuda_loss cuda_gather cuda_sgd cuda_optimizer fused_act fused_backward cublaslt_act cublaslt_backward strategies_persistent_follows strategies_graph_follows}" \
        tools/sanitize_cuda.sh build ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
fi
