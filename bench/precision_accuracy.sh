#!/usr/bin/env bash
# The accuracy of the low precisions: Fashion-MNIST test accuracy of tf32 and bf16
# Feeds docs/RESULTS.md "Accuracy against PyTorch" and docs/PERFORMANCE.md "Where the fastest versions stand".
# against fp32, 3 seeds, 10 epochs, one device call (after a build of build/ffnn):
#   bash bench/precision_accuracy.sh DATA_DIR
# For each net and strategy (NETS: "ARCH:BATCH" words; STRATEGIES: comma lists per
# precision, e.g. the strategy auto picks), the final test accuracy per seed and
# the mean difference to fp32 (points). Prints a markdown table.
set -uo pipefail
DATA=${1:?usage: precision_accuracy.sh DATA_DIR}
F=${FFNN:-build/ffnn}
NETS=${NETS:-784-256relu-10:1024 784-1024relu-1024relu-10:1024}
STRATEGIES=${STRATEGIES:-auto cublaslt graph}
EPOCHS=${EPOCHS:-10}; LR=${LR:-0.1}
acc() { # NET BATCH STRATEGY PRECISION SEED -> test accuracy (percent) of the last epoch
    "$F" train --data "$DATA" --arch "$1" --batch "$2" --epochs "$EPOCHS" --lr "$LR" \
        --device cuda --strategy "$3" --precision "$4" --seed "$5" 2> /dev/null |
        awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "test_acc") v = $(i + 1) }
             END { sub("%", "", v); print v }'
}
echo "| net, batch | strategy | fp32 (seeds 1-3) | tf32 | bf16 | tf32 - fp32 | bf16 - fp32 |"
echo "|---|---|---|---|---|---|---|"
for nb in $NETS; do
    net=${nb%:*}; batch=${nb#*:}
    for s in $STRATEGIES; do
        declare -A a=()
        for p in fp32 tf32 bf16; do
            for seed in 1 2 3; do a[$p$seed]=$(acc "$net" "$batch" "$s" $p $seed); done
        done
        row=$(python3 - "${a[fp321]}" "${a[fp322]}" "${a[fp323]}" "${a[tf321]}" "${a[tf322]}" \
              "${a[tf323]}" "${a[bf161]}" "${a[bf162]}" "${a[bf163]}" <<'PY'
import sys, statistics as st
v = sys.argv[1:]
def grp(i):
    try: return [float(x) for x in v[i:i + 3]]
    except ValueError: return None
f, t, b = grp(0), grp(3), grp(6)
def show(g): return "refused/failed" if g is None else "%s (%.2f)" % (" ".join("%.2f" % x for x in g), st.mean(g))
def diff(g): return "-" if g is None or f is None else "%+.2f" % (st.mean(g) - st.mean(f))
print("| %s | %s | %s | %s | %s |" % (show(f), show(t), show(b), diff(t), diff(b)))
PY
)
        echo "| $net, $batch | $s $row"
        unset a
    done
done
