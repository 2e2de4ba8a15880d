#!/usr/bin/env bash
# A tree against a base tree on the GPU, fresh processes interleaved (docs/RESULTS.md
# "Adam and AdamW replayed too", "The persistent kernel with one grid barrier"):
#   BASE=DIR       a tree exported by git archive (e.g. `git archive HEAD~1 | tar -x -C
#                  .hx/base`); its build/ffnn is built beside this tree's
#   CONFIGS=...    comma-separated ARCH:BATCH:STRATEGY:PRECISION[:OPTIMIZER[:LR]]
#   ROUNDS=2 EPOCHS=6
#   TESTS="..."    optional: build/ffnn_tests with these filters first (this tree)
#   PROFILE=ARCH:B1:B2...  optional: FFNN_PERSISTENT_PROFILE=1 of this tree at each batch
#   [OUT=dir] bash bench/base_vs_tree.sh DATA_DIR
# Each figure: the median ms of epochs 2-N of one process, its final test accuracy and
# train loss (%.6f: equal between trees that should give the same bits).
set -uo pipefail
DATA=${1:?usage: BASE=DIR CONFIGS=... bash bench/base_vs_tree.sh DATA_DIR}
: "${BASE:?BASE=DIR: the base tree}" "${CONFIGS:?CONFIGS=ARCH:BATCH:STRATEGY:PRECISION,...}"
OUT=${OUT:-build/bench/base-vs-tree}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
ARCH='CUDA_ARCH=-gencode arch=compute_90,code=sm_90'
make -C "$BASE" -j6 $CJSON "$ARCH" build/ffnn > "$OUT/build_base.log" 2>&1 &
make -j10 $CJSON "$ARCH" all build/ffnn_tests > "$OUT/build.log" 2>&1 ||
    { tail -30 "$OUT/build.log"; exit 1; }
wait
[ -x "$BASE/build/ffnn" ] || { tail -30 "$OUT/build_base.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -n "${TESTS:-}" ]; then
    FFNN_PYTHON=$(command -v python3) build/ffnn_tests $TESTS 2>&1 | grep -v "^PASS" | tail -15
fi
if [ -n "${PROFILE:-}" ]; then
    IFS=: read -r parch pbatches <<< "$PROFILE"
    for b in ${pbatches//:/ }; do
        echo "== persistent profile, $parch batch $b"
        FFNN_PERSISTENT_PROFILE=1 build/ffnn train --data "$DATA" --arch "$parch" --batch "$b" \
            --epochs 1 --device cuda --strategy persistent 2>&1 | grep -A9 "persistent profile"
    done
fi
med() { # median ms of the --json epoch lines after the first, and the last accuracy
    python3 -c "import sys, json, statistics
r = [json.loads(l) for l in sys.stdin if l.startswith('{')]
t = [1e3 * x['seconds'] for x in r[1:]]
print(f\"{statistics.median(t):.2f} acc {r[-1].get('test_accuracy', 0)} loss {r[-1].get('train_loss', 0)}\" if t else 'failed')"
}
for i in $(seq "${ROUNDS:-2}"); do
    for c in ${CONFIGS//,/ }; do
        IFS=: read -r arch b s p o lr <<< "$c"
        for tree in base new; do
            bin=build/ffnn; [ $tree = base ] && bin=$BASE/build/ffnn
            echo "$arch b$b $s $p ${o:-sgd} $tree r$i: $($bin train --data "$DATA" \
                --arch "$arch" --batch "$b" --epochs "${EPOCHS:-6}" --device cuda \
                --strategy "$s" --precision "$p" --optimizer "${o:-sgd}" ${lr:+--lr $lr} \
                --json --seed 1 2>/dev/null | med)"
        done
    done
done
