#!/usr/bin/env python3
"""Plot the seed-001 benchmark (ffnn bench seed001).

usage: python3 bench/plot_seed001.py [CSV] [PNG]
       (defaults docs/seed001.csv and docs/seed001.png)

Two panels, log-log: whole-run training time against samples (H = 256) and against
the hidden width (N = 2,560), for cuda naive, cuda tiled and the OpenMP backend
(ours), beside the seed's published T4 figures (dashed, grey markers; a different
GPU). The PNG is kept under 200 KB (the dpi drops until it fits).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MAX_BYTES = 200 * 1024
SEED_SAMPLES = [256, 2560, 25600]
SEED_NAIVE = [0.306, 2.000, 21.002]
SEED_OPT = [0.248, 1.561, 14.823]
SEED_HIDDEN = [32, 64, 128, 256, 512, 1024]
SEED_HIDDEN_S = [0.810, 0.921, 1.107, 1.551, 2.743, 4.645]
STYLE = {"cuda_naive": ("tab:red", "o", "cuda naive"),
         "cuda_tiled": ("tab:blue", "s", "cuda tiled"),
         "cpu_omp": ("tab:green", "^", "CPU OpenMP")}


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def panel(ax, rows, part, key, xlabel, title):
    plotted = False
    for backend, (color, marker, label) in STYLE.items():
        pts = sorted((int(r[key]), num(r["seconds"])) for r in rows
                     if r["part"] == part and r["backend"] == backend and r["status"] == "ok")
        if not pts:
            continue
        dev = next((r["device"] for r in rows if r["backend"] == backend and r["device"]), "")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color, marker=marker,
                ms=5, label=f"ffnn {label}" + (f" ({dev[:40]})" if dev else ""))
        plotted = True
    epochs = {r["epochs"] for r in rows}
    if epochs == {"100"}:
        if part == "samples":
            ax.plot(SEED_SAMPLES, SEED_NAIVE, "--o", color="gray", mfc="white", ms=5,
                    label="seed T4 baseline")
            ax.plot(SEED_SAMPLES, SEED_OPT, "--s", color="black", mfc="white", ms=5,
                    label="seed T4 optimized")
        else:
            ax.plot(SEED_HIDDEN, SEED_HIDDEN_S, "--s", color="black", mfc="white", ms=5,
                    label="seed T4 (table II)")
    ax.set_xscale("log", base=2 if part == "hidden" else 10)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("training time, whole run (s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if plotted or epochs == {"100"}:
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no rows", transform=ax.transAxes, ha="center")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/seed001.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/seed001.png"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    ep = rows[0]["epochs"] if rows else "?"
    hs = next((r["samples"] for r in rows if r["part"] == "hidden"), "2560")
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    panel(axes[0], rows, "samples", "samples", "samples (H = 256)",
          f"time vs samples, {ep} epochs, batch 256")
    panel(axes[1], rows, "hidden", "hidden", f"hidden width (N = {hs})",
          f"time vs hidden width, {ep} epochs, batch 256")
    date = rows[0]["date"] if rows else ""
    fig.suptitle("Seed 001: 32-Hrelu:nobias-1:nobias, MSE, SGD lr 0.002 on synth:regression; "
                 f"seed figures from a Tesla T4 (another GPU)  ({date})", fontsize=9)
    fig.tight_layout()
    for dpi in (110, 90, 75, 60, 50, 40):
        fig.savefig(dst, dpi=dpi)
        size = os.path.getsize(dst)
        if size <= MAX_BYTES:
            break
    print(f"wrote {dst} ({size} bytes, dpi {dpi})")
    if size > MAX_BYTES:
        sys.exit(f"{dst} is {size} bytes, over {MAX_BYTES}")


if __name__ == "__main__":
    main()
