#!/usr/bin/env python3
"""Plot the seed-000 benchmark (ffnn bench seed000).

usage: python3 bench/plot_seed000.py [CSV] [PNG]
       (defaults docs/seed000.csv and docs/seed000.png)

Four panels: (a) 10-epoch time per backend (log), (b) time and accuracy vs batch,
(c) time vs hidden width, (g) us per image vs evaluation batch; ours beside the
seed's published T4 figures (grey; a different GPU and MNIST, not Fashion-MNIST).
The PNG is kept under 200 KB (the dpi drops until it fits).
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


def pts(rows, part, key, val):
    out = sorted((num(r[key]), num(r[val]), num(r["seed_t4_seconds_or_us"]))
                 for r in rows if r["part"] == part and r["status"] == "ok")
    return out


def sweep(ax, rows, part, key, xlabel, val="seconds", ylabel="time (s)"):
    p = pts(rows, part, key, val)
    if p:
        ax.plot([q[0] for q in p], [q[1] for q in p], "-o", color="tab:blue", label="ffnn")
        s = [(q[0], q[2]) for q in p if not math.isnan(q[2])]
        if s:
            ax.plot([q[0] for q in s], [q[1] for q in s], "--s", color="gray", mfc="white",
                    label="seed T4")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/seed000.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/seed000.png"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0][0]
    a = [r for r in rows if r["part"] == "cpu_gpu" and r["status"] == "ok"]
    if a:
        names = [r["backend"] for r in a]
        ax.bar(range(len(a)), [num(r["seconds_all_epochs"]) for r in a], color="tab:blue")
        for i, r in enumerate(a):
            acc = num(r["test_acc"]) if r["timed_epochs"] == r["epochs"] else num(r["test_acc_epoch1"])
            ax.text(i, num(r["seconds_all_epochs"]), f"{100 * acc:.1f}%", ha="center",
                    va="bottom", fontsize=7)
        ax.set_xticks(range(len(a)))
        ax.set_xticklabels(names, fontsize=7)
        ax.set_yscale("log")
    ax.set_ylabel("training time (s, ref. extrapolated)")
    ax.set_title("(a) CPU vs GPU (labels: test accuracy)", fontsize=9)
    sweep(axes[0][1], rows, "batch", "batch", "batch size")
    axes[0][1].set_title("(b) batch, cuda tiled", fontsize=9)
    sweep(axes[1][0], rows, "hidden", "hidden", "hidden width")
    axes[1][0].set_title("(c) hidden width, cuda tiled", fontsize=9)
    sweep(axes[1][1], rows, "eval", "eval_batch", "evaluation batch", "us_per_image",
          "us per test image")
    axes[1][1].set_title("(g) ffnn_trainer_evaluate", fontsize=9)
    data = next((r["data"] for r in rows if r.get("data")), "")
    dev = next((r["device"] for r in rows if r["backend"].startswith("cuda") and r["device"]), "")
    fig.suptitle(f"seed 000: 784-256relu-10, {data[:60]}; GPU {dev[:40]}", fontsize=9)
    fig.tight_layout()
    dpi = 110
    while True:
        fig.savefig(dst, dpi=dpi)
        if os.path.getsize(dst) <= MAX_BYTES or dpi <= 40:
            break
        dpi -= 10
    print(f"wrote {dst} ({os.path.getsize(dst)} bytes, dpi {dpi})")


if __name__ == "__main__":
    main()
