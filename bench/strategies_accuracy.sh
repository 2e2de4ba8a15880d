#!/usr/bin/env bash
# Test accuracy of cuda strategies (and precisions) against the PyTorch twin
# (bench/torch_accuracy.py), seeds 1..N, one GPU call. Default: every fp32 strategy on
# 784-256relu-10, batch 64, lr 0.1, 10 epochs. Feeds docs/RESULTS.md "Accuracy against
# PyTorch" and docs/PERFORMANCE.md "Where the fastest versions stand". Needs build/ffnn.
#   [STRATEGIES="persistent graph ..."] [PRECISIONS="fp32 tf32 bf16"] [ARCH=..] [BATCH=..]
#   [LR=..] [EPOCHS=..] bash bench/strategies_accuracy.sh DATA_DIR [N]
# e.g. the tiled strategy at lr 0.01: STRATEGIES=tiled LR=0.01 bash bench/strategies_accuracy.sh DATA 10
set -uo pipefail
DATA=${1:?usage: strategies_accuracy.sh DATA_DIR [N]}; N=${2:-3}
F=${FFNN:-build/ffnn}
STRATEGIES=${STRATEGIES:-persistent graph fused cublas tiled auto}
PRECISIONS=${PRECISIONS:-fp32}
ARCH=${ARCH:-784-256relu-10}; BATCH=${BATCH:-64}; LR=${LR:-0.1}; EPOCHS=${EPOCHS:-10}
OUT=${OUT:-build/bench}; mkdir -p "$OUT"
J="$OUT/strategies_accuracy.jsonl"; : > "$J"
for k in $STRATEGIES; do
    for p in $PRECISIONS; do
        for s in $(seq 1 "$N"); do
            "$F" train --data "$DATA" --arch "$ARCH" --batch "$BATCH" --epochs "$EPOCHS" --lr "$LR" \
                --device cuda --strategy "$k" --precision "$p" --seed "$s" --json 2>/dev/null | tail -1 |
                sed "s/^{/{\"system\": \"ffnn $k:$p\", \"seed\": $s, /" >> "$J"
        done
    done
done
PYTHONUNBUFFERED=1 python3 bench/torch_accuracy.py "$DATA" --arch "$ARCH" --batch "$BATCH" \
    --lr "$LR" --epochs "$EPOCHS" --seeds $(seq 1 "$N") | sed 's/"system": "torch"/"system": "torch fp32"/' >> "$J"
python3 - "$J" "$ARCH" "$BATCH" "$LR" <<'PY'
import json, statistics, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line); g[r["system"]].append(100 * r["test_accuracy"])
print(f"{sys.argv[2]}, batch {sys.argv[3]}, lr {sys.argv[4]}")
print("| system | seeds | mean test accuracy % | std | min | max |")
print("|---|---|---|---|---|---|")
for m, a in sorted(g.items()):
    sd = statistics.stdev(a) if len(a) > 1 else 0.0
    print(f"| {m} | {len(a)} | {statistics.mean(a):.2f} | {sd:.2f} | {min(a):.2f} | {max(a):.2f} |")
PY
