#!/usr/bin/env bash
# Accuracy over many seeds, ffnn (cuda tiled) and the PyTorch twin, in one device
# call: seed-000 config (784-256-10, batch 64, 10 epochs) at lr 0.01 and 0.1.
#   bash bench/accuracy_seeds.sh DATA_DIR NSEEDS      (after bench/device_run.sh built)
set -uo pipefail
DATA=${1:?DATA_DIR}; N=${2:-10}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
: > "$OUT/seeds.jsonl"
for lr in 0.01 0.1; do
    for s in $(seq 1 "$N"); do
        build/ffnn train --data "$DATA" --arch 784-256relu-10 --batch 64 --epochs 10 \
            --device cuda --strategy tiled --lr $lr --seed $s --json 2>/dev/null | tail -1 |
            sed "s/^{/{\"system\": \"ffnn\", \"lr\": $lr, \"seed\": $s, /" >> "$OUT/seeds.jsonl"
    done
    PYTHONUNBUFFERED=1 python3 bench/torch_seed000.py "$DATA" --lr $lr --seeds $(seq 1 "$N") \
        >> "$OUT/seeds.jsonl"
done
python3 - "$OUT/seeds.jsonl" <<'PY'
import json, statistics, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line); g[(r["system"], r["lr"])].append(100 * r["test_accuracy"])
print("| system | lr | seeds | mean | std | min | max | seeds 1-3 mean |")
print("|---|---|---|---|---|---|---|---|")
for (sy, lr), a in sorted(g.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(f"| {sy} | {lr} | {len(a)} | {statistics.mean(a):.2f} | {statistics.stdev(a):.2f} | "
          f"{min(a):.2f} | {max(a):.2f} | {statistics.mean(a[:3]):.2f} |")
PY
