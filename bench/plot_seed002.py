#!/usr/bin/env python3
"""Plot the seed-002 benchmark (ffnn bench seed002).

usage: python3 bench/plot_seed002.py [CSV] [PNG]
       (defaults docs/seed002.csv and docs/seed002.png)

Three panels: GPU outputs/s against N for unique weights and for reused weights
(cuda global and shared, one launch per layer and CUDA graph, one line per K), each
with the copy ceiling turned into outputs/s by the byte model (24 B per output for
unique weights with R = 3, 8 B for reused) and the seed's L40 figure (1.58e11
outputs/s, shared, N = 2^21, K = 1000); and the OpenMP strong-scaling speedup and
weak-scaling efficiency against threads. The PNG is kept under 200 KB (the dpi
drops until it fits).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SEED_L40 = 1.58e11
MAX_BYTES = 200 * 1024


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def gpu_panel(ax, rows, regime, ceiling):
    ok = [r for r in rows if r["part"] == "gpu" and r["regime"] == regime and r["status"] == "ok"]
    colors = {"global": "tab:blue", "shared": "tab:green"}
    styles = {"stream": "-", "graph": "--"}
    markers = ["o", "s", "^", "D", "v", "P"]
    ks = sorted({int(r["K"]) for r in ok})
    bpo = None
    for variant in ("global", "shared"):
        for launch in ("stream", "graph"):
            for i, k in enumerate(ks):
                pts = sorted((int(r["N"]), num(r["outputs_per_s"])) for r in ok
                             if r["variant"] == variant and r["launch"] == launch
                             and int(r["K"]) == k)
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[launch],
                        color=colors[variant], marker=markers[i % len(markers)], ms=4, lw=1.2,
                        label=f"{variant} {launch} K={k}")
    for r in ok:
        bpo = num(r["bytes_per_output"])
        break
    if ceiling and bpo:
        ax.axhline(ceiling / bpo, color="black", lw=1, ls=":",
                   label=f"copy ceiling / {bpo:.0f} B = {ceiling / bpo:.3g}")
    if regime == "unique":
        ax.plot([2 ** 21], [SEED_L40], "r*", ms=12, label="seed 002, L40 (shared, K=1000)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (input width)")
    ax.set_ylabel("outputs / s")
    what = "unique weights per layer" if regime == "unique" else "one weight set reused (L2)"
    ax.set_title(f"GPU, {what}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ok:
        ax.legend(fontsize=6, ncol=2, loc="lower right")
    else:
        ax.text(0.5, 0.5, "no GPU rows", transform=ax.transAxes, ha="center")


def cpu_panel(ax, rows):
    plotted = False
    colors = {"unique": "tab:purple", "reused": "tab:orange"}
    maxp = 1
    for part, style, label in (("omp_strong", "-o", "strong: speedup"),
                               ("omp_weak", "--s", "weak: efficiency x threads")):
        for regime in ("unique", "reused"):
            pts = sorted((int(r["threads"]), num(r["t_base_over_t"])) for r in rows
                         if r["part"] == part and r["regime"] == regime and r["status"] == "ok")
            if not pts:
                continue
            # weak scaling: efficiency E = T1/TP; plot E*P so both read as speedup
            ys = [y if part == "omp_strong" else y * p for p, y in pts]
            ax.plot([p for p, _ in pts], ys, style, color=colors[regime], ms=4,
                    label=f"{label}, {regime}")
            maxp = max(maxp, max(p for p, _ in pts))
            plotted = True
    if plotted:
        ax.plot([1, maxp], [1, maxp], ":", color="gray", label="ideal")
    cpu = next((r["device"] for r in rows if r["part"].startswith("omp") and r["device"]), "")
    strong = next((r for r in rows if r["part"] == "omp_strong" and r["status"] == "ok"), None)
    sub = f"N=2^{int(round(math.log2(int(strong['N']))))}, K={strong['K']}" if strong else ""
    ax.set_title(f"OpenMP scaling ({sub})\n{cpu}", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("threads")
    ax.set_ylabel("T(1)/T(P) (weak: x P)")
    ax.grid(True, which="both", alpha=0.3)
    if plotted:
        ax.legend(fontsize=6, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no OpenMP rows", transform=ax.transAxes, ha="center")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/seed002.csv"
    dst = sys.argv[2] if len(sys.argv) > 2 else "docs/seed002.png"
    rows = load(src)
    ceiling = next((num(r["bytes_per_s"]) for r in rows if r["part"] == "copy"
                    and r["status"] == "ok"), None)
    gpu = next((r["device"] for r in rows if r["part"] == "gpu" and r["device"]), "no GPU")
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    gpu_panel(axes[0], rows, "unique", ceiling)
    gpu_panel(axes[1], rows, "reused", ceiling)
    cpu_panel(axes[2], rows)
    date = rows[0]["date"] if rows else ""
    ttl = f"Seed 002: K-layer 1-D locally connected forward, R=3, sigmoid; {gpu}"
    if ceiling:
        ttl += f", copy ceiling {ceiling:.3g} B/s"
    fig.suptitle(f"{ttl}  ({date})", fontsize=10)
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
