#!/usr/bin/env python3
"""Summarise the JSON lines of bench/device_run.sh: per device/kernels/lr, the mean
final test accuracy over seeds and the median seconds per epoch (epochs 2..10)."""
import json
import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)  # (device, kernels, lr, seed) -> epoch rows
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        runs[(r["device"], r["kernels"], r["lr"], r["seed"])].append(r)

groups = defaultdict(list)
for (dev, k, lr, seed), rows in sorted(runs.items()):
    rows.sort(key=lambda r: r["epoch"])
    groups[(dev, k, lr)].append(rows)

print("| device | kernels | lr | seeds | final test acc per seed | mean | s/epoch (median, epochs 2-10) |")
print("|---|---|---|---|---|---|---|")
for (dev, k, lr), seeds in sorted(groups.items()):
    accs = [100 * rows[-1]["test_accuracy"] for rows in seeds]
    secs = [r["seconds"] for rows in seeds for r in rows[1:]] or [r["seconds"] for rows in seeds for r in rows]
    epochs = {len(rows) for rows in seeds}
    print(f"| {dev} | {k} | {lr} | {len(seeds)} ({'/'.join(map(str, sorted(epochs)))} epochs) | "
          f"{', '.join(f'{a:.2f}' for a in accs)} | {statistics.mean(accs):.2f} | "
          f"{statistics.median(secs):.4f} |")
