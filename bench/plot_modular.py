#!/usr/bin/env python3
"""Plot the modular benchmark (ffnn bench modular, report 004).

usage: python3 bench/plot_modular.py [CSV] [PNG]
       (defaults build/bench/modular.csv and the CSV's name with .png)

Three panels: (a) training time per task, cuda tiled vs CPU OpenMP vs report 004's
whole-program time (its GPU; MNIST, ours Fashion-MNIST); (b) per-op GPU time of one
training step at each batch size; (c) the CE batch sum by atomics / shared tree /
warp shuffle against B, with the report's 200.94 / 3.50 / 2.49 us as dashed lines.
A panel without ok rows is not drawn (the figure's last line says why). The PNG is
kept under 200 KB.
"""
import math

import plot_common as pc

TASKS = ["points", "binary", "full_ce", "full_mse"]
SEED_S = {"points": 0.830, "binary": 0.987, "full_mse": 4.321}


def training(ax, ok):
    w = 0.27
    for j, (backend, color) in enumerate([("cuda_tiled", "tab:blue"), ("cpu_omp", "tab:green")]):
        first = True
        for i, t in enumerate(TASKS):
            r = next((r for r in ok if r["task"] == t and r["backend"] == backend), None)
            if r is None:
                continue
            v = pc.num(r["train_seconds"])
            ax.bar(i + (j - 1) * w, v, w, color=color,
                   label=("cuda tiled" if j == 0 else "CPU OpenMP") if first else None)
            first = False
            ax.text(i + (j - 1) * w, v, f"{100 * pc.num(r['test_accuracy']):.1f}%",
                    ha="center", va="bottom", fontsize=7, rotation=90)
    for i, t in enumerate(TASKS):
        if t in SEED_S:
            ax.bar(i + w, SEED_S[t], w, color="lightgrey", hatch="//",
                   label="report 004 (its GPU, MNIST)" if t == "points" else None)
    ax.set_xticks(range(len(TASKS)))
    ax.set_xticklabels(TASKS)
    ax.set_yscale("log")
    ax.set_ylabel("training time (s); labels: test accuracy")
    ax.legend(fontsize=8)


def step(ax, ok):
    batches = sorted({int(r["batch"]) for r in ok})
    ops = []
    for r in ok:
        if r["task"] not in ops:
            ops.append(r["task"])
    w = 0.8 / max(1, len(batches))
    for j, b in enumerate(batches):
        ys = [next((pc.num(r["us_median"]) for r in ok if r["task"] == op
                    and int(r["batch"]) == b), math.nan) for op in ops]
        ax.barh([i + j * w for i in range(len(ops))], ys, w, label=f"B = {b}")
    ax.set_yticks([i + 0.4 - w / 2 for i in range(len(ops))])
    ax.set_yticklabels(ops, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("GPU time (us, median)")
    ax.legend(fontsize=8)


def reduction(ax, ok):
    for v, color, seed in [("atomic", "tab:red", 200.94), ("shared_tree", "tab:orange", 3.50),
                           ("warp_shuffle", "tab:blue", 2.49)]:
        pts = sorted((int(r["batch"]), pc.num(r["us_median"])) for r in ok if r["task"] == v)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color,
                    label=f"ffnn {v}")
        ax.axhline(seed, color=color, ls="--", lw=1, label=f"report 004 {v} (B=100, BCE)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("B (rows of 10 logits)")
    ax.set_ylabel("us (median)")
    ax.legend(fontsize=7)


def main():
    src, dst = pc.paths("modular", __doc__)
    rows = pc.load(src, "modular")
    plt = pc.pyplot()

    def part(name):
        return [r for r in rows if r["part"] == name]

    panels = [pc.Panel("(a) training time", part("train"), training),
              pc.Panel("(b) one training step, op by op", part("step"), step),
              pc.Panel("(c) CE batch sum three ways", part("lab"), reduction)]
    gpu = next((r["device"] for r in rows if r["backend"] != "cpu_omp" and r["device"]
                and r["status"] == "ok"), "")
    cpu = next((r["device"] for r in rows if r["backend"] == "cpu_omp" and r["device"]), "")
    date = rows[0]["date"] if rows else ""
    title = (f"ffnn bench modular (report 004): {'GPU ' + gpu if gpu else 'no GPU'}; "
             f"CPU {cpu}; {date}")
    train = part("train")
    notes = [pc.skipped_rows(train, "backend", "cuda"), pc.skipped_rows(train, "backend", "cpu")]
    for backend in ("cuda_tiled", "cpu_omp"):  # tasks missing beside others that ran
        mine = [r for r in train if r["backend"] == backend]
        if any(r["status"] == "ok" for r in mine):
            notes += [(f"(a) {r['task']} on {backend}", pc.why_empty([r])) for r in mine
                      if r["status"] != "ok"]
    pc.save(pc.figure(plt, panels, title, ncols=3, panel_size=(5.3, 4.6), notes=notes), dst)


if __name__ == "__main__":
    main()
