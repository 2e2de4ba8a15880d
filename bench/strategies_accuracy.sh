#!/usr/bin/env bash
# Accuracy of every cuda strategy against the PyTorch twin, one device call (issue 4,
# item 4): seed-000 config (784-256relu-10, batch 64, lr 0.1, 10 epochs) for seeds
# 1..N; and the wide net 784-1024relu-1024relu-10 at batch 1024 (lr 0.1, 10 epochs)
# in fp32 / tf32 / bf16 (issue 4, item 6). Needs build/ffnn (bench/vs_torch.sh builds it).
#   bash bench/strategies_accuracy.sh DATA_DIR [N]
set -uo pipefail
DATA=${1:?DATA_DIR}; N=${2:-3}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
J="$OUT/accuracy.jsonl"; : > "$J"
run() { # tag arch batch kernels precision seed
    build/ffnn train --data "$DATA" --arch "$2" --batch "$3" --epochs 10 --lr 0.1 \
        --device cuda --strategy "$4" --precision "$5" --seed "$6" --json 2>/dev/null | tail -1 |
        sed "s/^{/{\"system\": \"ffnn\", \"config\": \"$1\", \"mode\": \"$4:$5\", \"seed\": $6, /" >> "$J"
}
for k in persistent graph fused cublas tiled auto; do
    for s in $(seq 1 "$N"); do run seed000 784-256relu-10 64 $k fp32 $s; done
done
PYTHONUNBUFFERED=1 python3 bench/torch_seed000.py "$DATA" --lr 0.1 --seeds $(seq 1 "$N") |
    sed 's/^{/{"system": "torch", "config": "seed000", "mode": "torch:fp32", /' >> "$J"
for p in fp32 tf32 bf16; do
    for s in $(seq 1 "$N"); do run wide 784-1024relu-1024relu-10 1024 cublas $p $s; done
done
PYTHONUNBUFFERED=1 python3 bench/torch_seed000.py "$DATA" --lr 0.1 --seeds $(seq 1 "$N") \
    --arch 784-1024relu-1024relu-10 --batch 1024 |
    sed 's/^{/{"system": "torch", "config": "wide", "mode": "torch:fp32", /' >> "$J"
python3 - "$J" <<'PY'
import json, statistics, sys
from collections import defaultdict
g = defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith("{"): continue
    r = json.loads(line); g[(r["config"], r["mode"])].append(100 * r["test_accuracy"])
print("| config | mode | seeds | mean test accuracy % | min | max |")
print("|---|---|---|---|---|---|")
for (c, m), a in sorted(g.items()):
    print(f"| {c} | {m} | {len(a)} | {statistics.mean(a):.2f} | {min(a):.2f} | {max(a):.2f} |")
PY
