#!/usr/bin/env bash
# Do the captured CUDA graphs replay, and what does each strategy cost per epoch?
# (docs/RESULTS.md "Graphs replayed", 2026-11-24.) Three parts, fresh processes:
#  1. cuBLASLt's own log (CUBLASLT_LOG_LEVEL=2) of a 5-epoch cublaslt run: the
#     cublasLtMatmul calls made on the host. With replay only epoch 1 (the captures)
#     and the evaluations call it; a capture per launch calls it in every step.
#  2. with BASE=DIR (a tree exported by git archive): that tree's build/ffnn against
#     this one on the CONFIGS rows (ARCH:BATCH:STRATEGY:PRECISION), interleaved, ROUNDS.
#  3. SWEEP=1: persistent / graph / cublas / cublaslt / auto on the nets x batches of
#     NETS (ARCH:BATCH) in fp32, tf32 and bf16 (auto's rule, src/strategy/auto.c).
# Each figure: the median of epochs 2-N of one process (ms/epoch).
#   [BASE=.hx/base] [SWEEP=1] [ROUNDS=3] bash bench/graph_replay.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: graph_replay.sh DATA_DIR}
OUT=${OUT:-replay-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
ARCH='CUDA_ARCH=-gencode arch=compute_90,code=sm_90'
if [ -n "${BASE:-}" ]; then
    make -C "$BASE" -j8 $CJSON "$ARCH" build/ffnn > "$OUT/build_base.log" 2>&1 &
fi
make -j8 $CJSON "$ARCH" build/ffnn > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
med() { # the median ms of the --json epoch lines after the first
    python3 -c "import sys, json, statistics
t = [1e3 * json.loads(l)['seconds'] for l in sys.stdin if l.startswith('{')][1:]
print(f'{statistics.median(t):.2f}' if t else 'failed')"
}
train() { # BIN ARCH BATCH STRATEGY PRECISION EPOCHS
    "$1" train --data "$DATA" --arch "$2" --batch "$3" --strategy "$4" --precision "$5" \
        --epochs "$6" --device cuda --json --seed 1 2>/dev/null | med
}
WIDE=784-1024relu-1024relu-10
CUBLASLT_LOG_LEVEL=2 CUBLASLT_LOG_FILE="$OUT/cublaslt.log" \
    train build/ffnn $WIDE 1024 cublaslt bf16 5 > /dev/null
echo "part 1: cublasLtMatmul calls in 5 epochs of $WIDE, batch 1024 (59 steps of ~8.5" \
     "matmuls an epoch): $(grep -c 'Trace\]\[cublasLtMatmul\]' "$OUT/cublaslt.log")"
ROUNDS=${ROUNDS:-3}
if [ -n "${BASE:-}" ]; then
    CONFIGS=${CONFIGS:-"$WIDE:1024:auto:fp32 $WIDE:1024:auto:tf32 $WIDE:1024:auto:bf16
        784-256relu-10:1024:auto:fp32 784-256relu-10:1024:cublas:fp32
        784-256relu-10:256:graph:fp32 784-256relu-10:64:graph:fp32"}
    for i in $(seq "$ROUNDS"); do
        for c in $CONFIGS; do
            IFS=: read -r arch b s p <<< "$c"
            base=$(train "$BASE/build/ffnn" "$arch" "$b" "$s" "$p" 5)
            echo "part 2, round $i: $arch batch $b $s $p: base $base" \
                 "new $(train build/ffnn "$arch" "$b" "$s" "$p" 5)"
        done
    done
fi
if [ "${SWEEP:-0}" = 1 ]; then
    DEEP=784$(printf -- '-128relu%.0s' 1 2 3 4 5 6 7 8)-10
    NETS=${NETS:-"784-256relu-10:64 784-256relu-10:256 784-256relu-10:512 784-256relu-10:1024
        $DEEP:256 $DEEP:1024 $WIDE:512"}
    for i in $(seq "$ROUNDS"); do
        for nb in $NETS; do
            IFS=: read -r arch b <<< "$nb"
            for p in fp32 tf32 bf16; do
                line="part 3, round $i: $arch batch $b $p:"
                for s in persistent graph cublas cublaslt auto; do
                    [ $s = persistent ] && { [ $p != fp32 ] || [ "$b" -gt 512 ]; } && continue
                    line="$line $s $(train build/ffnn "$arch" "$b" $s $p 4)"
                done
                echo "$line"
            done
        done
    done
fi
