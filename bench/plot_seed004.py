#!/usr/bin/env python3
"""Plot the seed-004 benchmark (ffnn bench seed004).

usage: python3 bench/plot_seed004.py [CSV] [PNG]   (defaults docs/seed004.csv, .png)

Three panels: (a) training time per task, cuda tiled vs CPU OpenMP vs the seed's
whole-program time (its GPU; MNIST, ours Fashion-MNIST); (b) per-op GPU time of one
training step at each batch size; (c) the CE batch sum by atomics / shared tree /
warp shuffle against B, with the seed's 200.94 / 3.50 / 2.49 us as dashed lines.
The PNG is kept under 200 KB.
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MAX_BYTES = 200 * 1024


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/seed004.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/seed004.png"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    ok = [r for r in rows if r["status"] == "ok"]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))

    ax = axes[0]
    tasks = ["points", "binary", "full_ce", "full_mse"]
    seed_s = {"points": 0.830, "binary": 0.987, "full_mse": 4.321}
    w = 0.27
    for j, (backend, color) in enumerate([("cuda_tiled", "tab:blue"), ("cpu_omp", "tab:green")]):
        for i, t in enumerate(tasks):
            r = next((r for r in ok if r["part"] == "train" and r["task"] == t
                      and r["backend"] == backend), None)
            if r is None:
                continue
            v = num(r["train_seconds"])
            ax.bar(i + (j - 1) * w, v, w, color=color,
                   label=("cuda tiled" if j == 0 else "CPU OpenMP") if i == 0 else None)
            ax.text(i + (j - 1) * w, v, f"{100 * num(r['test_accuracy']):.1f}%",
                    ha="center", va="bottom", fontsize=7, rotation=90)
    for i, t in enumerate(tasks):
        if t in seed_s:
            ax.bar(i + w, seed_s[t], w, color="lightgrey", hatch="//",
                   label="seed (its GPU, MNIST)" if t == "points" else None)
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels(tasks)
    ax.set_yscale("log")
    ax.set_ylabel("training time (s); labels: test accuracy")
    ax.set_title("a) training time")
    ax.legend(fontsize=8)

    ax = axes[1]
    step = [r for r in ok if r["part"] == "step"]
    batches = sorted({int(r["batch"]) for r in step})
    ops = []
    for r in step:
        if r["task"] not in ops:
            ops.append(r["task"])
    w = 0.8 / max(1, len(batches))
    for j, b in enumerate(batches):
        ys = [next((num(r["us_median"]) for r in step if r["task"] == op
                    and int(r["batch"]) == b), math.nan) for op in ops]
        ax.barh([i + j * w for i in range(len(ops))], ys, w, label=f"B = {b}")
    ax.set_yticks([i + 0.4 - w / 2 for i in range(len(ops))])
    ax.set_yticklabels(ops, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("GPU time (us, median)")
    ax.set_title("b) one training step, op by op")
    if batches:
        ax.legend(fontsize=8)

    ax = axes[2]
    lab = [r for r in ok if r["part"] == "lab"]
    for v, color, seed in [("atomic", "tab:red", 200.94), ("shared_tree", "tab:orange", 3.50),
                           ("warp_shuffle", "tab:blue", 2.49)]:
        pts = sorted((int(r["batch"]), num(r["us_median"])) for r in lab if r["task"] == v)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color,
                    label=f"ffnn {v}")
        ax.axhline(seed, color=color, ls="--", lw=1, label=f"seed {v} (B=100, BCE)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("B (rows of 10 logits)")
    ax.set_ylabel("us (median)")
    ax.set_title("c) CE batch sum three ways")
    ax.legend(fontsize=7)

    dev = next((r["device"] for r in rows if r["backend"] != "cpu_omp" and r["device"]), "")
    fig.suptitle(f"ffnn bench seed004 ({dev})", fontsize=10)
    fig.tight_layout()
    for dpi in (110, 90, 72, 60, 50):
        fig.savefig(dst, dpi=dpi)
        if os.path.getsize(dst) <= MAX_BYTES:
            break
    print(f"wrote {dst} ({os.path.getsize(dst)} bytes)")


if __name__ == "__main__":
    main()
