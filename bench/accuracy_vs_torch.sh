#!/usr/bin/env bash
# Accuracy of ffnn (cuda tiled) and PyTorch over seeds for one configuration, one call:
#   bash bench/accuracy_vs_torch.sh DATA_DIR ARCH BATCH LR EPOCHS NSEEDS   (after a build)
set -uo pipefail
DATA=$1; ARCH=$2; BATCH=$3; LR=$4; EPOCHS=$5; N=$6
OUT=${OUT:-build/bench}; mkdir -p "$OUT"; F="$OUT/acc_${ARCH}_${BATCH}.jsonl"; : > "$F"
for s in $(seq 1 "$N"); do
    build/ffnn train --data "$DATA" --arch "$ARCH" --batch "$BATCH" --epochs "$EPOCHS" \
        --device cuda --lr "$LR" --seed "$s" --json 2>/dev/null | tail -1 |
        sed "s/^{/{\"system\": \"ffnn\", \"arch\": \"$ARCH\", \"batch\": $BATCH, \"lr\": $LR, \"seed\": $s, /" >> "$F"
done
python3 bench/torch_accuracy.py "$DATA" --arch "$ARCH" --batch "$BATCH" --lr "$LR" \
    --epochs "$EPOCHS" --seeds $(seq 1 "$N") >> "$F"
python3 - "$F" <<'PY'
import json, statistics, sys
g = {}
for l in open(sys.argv[1]):
    r = json.loads(l); g.setdefault(r["system"], []).append(100 * r["test_accuracy"])
for k, a in g.items():
    print(f"{k}: n={len(a)} mean {statistics.mean(a):.2f} std {statistics.stdev(a):.2f} "
          f"min {min(a):.2f} max {max(a):.2f}")
PY
