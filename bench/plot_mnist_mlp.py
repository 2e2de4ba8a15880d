#!/usr/bin/env python3
"""Plot the mnist-mlp benchmark (ffnn bench mnist-mlp, report 000).

usage: python3 bench/plot_mnist_mlp.py [CSV] [PNG]
       (defaults build/bench/mnist-mlp.csv and the CSV's name with .png)

Four panels: (a) 10-epoch time per backend (log), (b) time vs batch, (c) time vs
hidden width, (g) us per image vs evaluation batch; ours beside report 000's published
T4 figures (grey; a different GPU, and MNIST rather than Fashion-MNIST). A panel
without ok rows is not drawn (the figure's last line says why). The PNG is kept under
200 KB.
"""
import math

import plot_common as pc


def cpu_gpu(ax, ok):
    names = [r["backend"] for r in ok]
    secs = [pc.num(r["seconds_all_epochs"]) for r in ok]
    ax.bar(range(len(ok)), secs, color="tab:blue")
    for i, r in enumerate(ok):
        done = r["timed_epochs"] == r["epochs"]
        acc = pc.num(r["test_acc"] if done else r["test_acc_epoch1"])
        ax.text(i, secs[i], f"{100 * acc:.1f}%", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(ok)))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("training time (s; reference extrapolated)")


def sweep(key, xlabel, val="seconds", ylabel="time (s)"):
    def draw(ax, ok):
        p = sorted((pc.num(r[key]), pc.num(r[val]), pc.num(r["seed_t4_seconds_or_us"]))
                   for r in ok)
        ax.plot([q[0] for q in p], [q[1] for q in p], "-o", color="tab:blue", label="ffnn")
        s = [(q[0], q[2]) for q in p if not math.isnan(q[2])]
        if s:
            ax.plot([q[0] for q in s], [q[1] for q in s], "--s", color="gray", mfc="white",
                    label="report 000, T4")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=7)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    return draw


def main():
    src, dst = pc.paths("mnist-mlp", __doc__)
    rows = pc.load(src, "mnist-mlp")
    plt = pc.pyplot()

    def part(name):
        return [r for r in rows if r["part"] == name]

    ep = next((r["epochs"] for r in part("cpu_gpu")), "?")
    panels = [
        pc.Panel(f"(a) CPU vs GPU, {ep} epochs (labels: test accuracy)", part("cpu_gpu"),
                 cpu_gpu),
        pc.Panel("(b) batch size, cuda tiled", part("batch"), sweep("batch", "batch size")),
        pc.Panel("(c) hidden width, cuda tiled", part("hidden"), sweep("hidden", "hidden width")),
        pc.Panel("(g) evaluation: ffnn_trainer_evaluate", part("eval"),
                 sweep("eval_batch", "evaluation batch", "us_per_image", "us per test image")),
    ]
    data = next((r["data"] for r in rows if r.get("data")), "")
    gpu = next((r["device"] for r in rows if r["backend"].startswith("cuda") and r["device"]
                and r["status"] == "ok"), "")
    date = rows[0]["date"] if rows else ""
    title = (f"ffnn bench mnist-mlp (report 000): 784-256relu-10 on {data}; "
             f"{'GPU ' + gpu if gpu else 'no GPU'}; {date}")
    notes = [pc.skipped_rows(part("cpu_gpu"), "backend", "cuda")]
    pc.save(pc.figure(plt, panels, title, ncols=2, panel_size=(5.6, 4.0), notes=notes), dst)


if __name__ == "__main__":
    main()
