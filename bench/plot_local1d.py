#!/usr/bin/env python3
"""Plot the local1d benchmark (ffnn bench local1d, report 002).

usage: python3 bench/plot_local1d.py [CSV] [PNG]
       (defaults build/bench/local1d.csv and the CSV's name with .png)

Three panels: outputs/s against N on the GPU for unique and for reused weights
(global / shared variants, stream and graph launches, each K), with the copy ceiling
divided by the bytes per output and report 002's L40 figure; OpenMP strong-scaling
speedup and weak-scaling efficiency against threads. A panel without ok rows is not
drawn (the figure's last line says why). The PNG is kept under 200 KB.
"""
import math

import plot_common as pc

SEED_L40 = 1.58e11


def gpu_panel(regime, ceiling):
    def draw(ax, ok):
        _gpu_draw(ax, ok, regime, ceiling)
    return draw


def _gpu_draw(ax, ok, regime, ceiling):
    colors = {"global": "tab:blue", "shared": "tab:green"}
    styles = {"stream": "-", "graph": "--"}
    markers = ["o", "s", "^", "D", "v", "P"]
    ks = sorted({int(r["K"]) for r in ok})
    bpo = None
    for variant in ("global", "shared"):
        for launch in ("stream", "graph"):
            for i, k in enumerate(ks):
                pts = sorted((int(r["N"]), pc.num(r["outputs_per_s"])) for r in ok
                             if r["variant"] == variant and r["launch"] == launch
                             and int(r["K"]) == k)
                if not pts:
                    continue
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[launch],
                        color=colors[variant], marker=markers[i % len(markers)], ms=4, lw=1.2,
                        label=f"{variant} {launch} K={k}")
    for r in ok:
        bpo = pc.num(r["bytes_per_output"])
        break
    if ceiling and bpo:
        ax.axhline(ceiling / bpo, color="black", lw=1, ls=":",
                   label=f"copy ceiling / {bpo:.0f} B = {ceiling / bpo:.3g}")
    if regime == "unique":
        ax.plot([2 ** 21], [SEED_L40], "r*", ms=12, label="report 002, L40 (shared, K=1000)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("N (input width)")
    ax.set_ylabel("outputs / s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2, loc="lower right")


def cpu_panel(ax, rows):
    plotted = False
    rows = [r for r in rows if r["status"] == "ok"]
    colors = {"unique": "tab:purple", "reused": "tab:orange"}
    maxp = 1
    for part, style, label in (("omp_strong", "-o", "strong: speedup"),
                               ("omp_weak", "--s", "weak: efficiency x threads")):
        for regime in ("unique", "reused"):
            pts = sorted((int(r["threads"]), pc.num(r["t_base_over_t"])) for r in rows
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
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("threads")
    ax.set_ylabel("T(1)/T(P) (weak: x P)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, loc="upper left")


def main():
    src, dst = pc.paths("local1d", __doc__)
    rows = pc.load(src, "local1d")
    plt = pc.pyplot()
    ceiling = next((pc.num(r["bytes_per_s"]) for r in rows if r["part"] == "copy"
                    and r["status"] == "ok"), None)
    gpu = next((r["device"] for r in rows if r["part"] == "gpu" and r["device"]
                and r["status"] == "ok"), "")
    cpu = next((r["device"] for r in rows if r["part"].startswith("omp") and r["device"]), "")
    strong = next((r for r in rows if r["part"] == "omp_strong" and r["status"] == "ok"), None)
    sub = f"N = 2^{int(round(math.log2(int(strong['N']))))}, K = {strong['K']}" if strong else ""

    def gpu_rows(regime):
        return [r for r in rows if r["part"] == "gpu" and r["regime"] == regime]

    no_gpu = "no GPU rows (run without a GPU or with --no-gpu)"
    panels = [pc.Panel("(a) GPU, unique weights per layer", gpu_rows("unique"),
                       gpu_panel("unique", ceiling), empty=no_gpu),
              pc.Panel("(b) GPU, one weight set reused (L2)", gpu_rows("reused"),
                       gpu_panel("reused", ceiling), empty=no_gpu),
              pc.Panel(f"(c) OpenMP scaling, {sub}",
                       [r for r in rows if r["part"].startswith("omp")], cpu_panel,
                       empty="no OpenMP rows (run with --no-cpu?)")]
    date = rows[0]["date"] if rows else ""
    title = ("ffnn bench local1d (report 002): K-layer 1-D locally connected forward, R = 3, "
             f"sigmoid; {'GPU ' + gpu if gpu else 'no GPU'}"
             f"{f', copy ceiling {ceiling:.3g} B/s' if ceiling else ''}; CPU {cpu}; {date}")
    pc.save(pc.figure(plt, panels, title, ncols=3, panel_size=(5.3, 4.6)), dst)


if __name__ == "__main__":
    main()
