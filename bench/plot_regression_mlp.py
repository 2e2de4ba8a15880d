#!/usr/bin/env python3
"""Plot the regression-mlp benchmark (ffnn bench regression-mlp, report 001).

usage: python3 bench/plot_regression_mlp.py [CSV] [PNG]
       (defaults build/bench/regression-mlp.csv and the CSV's name with .png)

Two panels, log-log: whole-run training time against samples (H = 256) and against
the hidden width, for cuda naive, cuda tiled and the OpenMP backend (ours), beside
report 001's published T4 figures (dashed, grey markers; a different GPU). A panel
without ok rows is not drawn (the figure's last line says why). The PNG is kept under
200 KB.
"""
import plot_common as pc

SEED_SAMPLES = [256, 2560, 25600]
SEED_NAIVE = [0.306, 2.000, 21.002]
SEED_OPT = [0.248, 1.561, 14.823]
SEED_HIDDEN = [32, 64, 128, 256, 512, 1024]
SEED_HIDDEN_S = [0.810, 0.921, 1.107, 1.551, 2.743, 4.645]
STYLE = {"cuda_naive": ("tab:red", "o", "cuda naive"),
         "cuda_tiled": ("tab:blue", "s", "cuda tiled"),
         "cpu_omp": ("tab:green", "^", "CPU OpenMP")}


def drawer(part, key, xlabel, report_rows):
    def draw(ax, ok):
        for backend, (color, marker, label) in STYLE.items():
            pts = sorted((int(r[key]), pc.num(r["seconds"])) for r in ok
                         if r["backend"] == backend)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=color,
                        marker=marker, ms=5, label=f"ffnn {label}")
        if report_rows:  # the report's runs were 100 epochs: comparable only then
            if part == "samples":
                ax.plot(SEED_SAMPLES, SEED_NAIVE, "--o", color="gray", mfc="white", ms=5,
                        label="report 001, T4 baseline")
                ax.plot(SEED_SAMPLES, SEED_OPT, "--s", color="black", mfc="white", ms=5,
                        label="report 001, T4 optimized")
            else:
                ax.plot(SEED_HIDDEN, SEED_HIDDEN_S, "--s", color="black", mfc="white", ms=5,
                        label="report 001, T4 (table II)")
        ax.set_xscale("log", base=2 if part == "hidden" else 10)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("training time, whole run (s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return draw


def main():
    src, dst = pc.paths("regression-mlp", __doc__)
    rows = pc.load(src, "regression-mlp")
    plt = pc.pyplot()
    ep = rows[0]["epochs"] if rows else "?"
    report = {r["epochs"] for r in rows} == {"100"}
    hs = next((r["samples"] for r in rows if r["part"] == "hidden"), "?")
    panels = [pc.Panel(f"(a) time vs samples (H = 256), {ep} epochs, batch 256",
                       [r for r in rows if r["part"] == "samples"],
                       drawer("samples", "samples", "samples", report)),
              pc.Panel(f"(b) time vs hidden width (N = {hs}), {ep} epochs, batch 256",
                       [r for r in rows if r["part"] == "hidden"],
                       drawer("hidden", "hidden", "hidden width", report))]
    gpu = next((r["device"] for r in rows if r["backend"].startswith("cuda") and r["device"]
                and r["status"] == "ok"), "")
    cpu = next((r["device"] for r in rows if r["backend"] == "cpu_omp" and r["device"]), "")
    date = rows[0]["date"] if rows else ""
    title = ("ffnn bench regression-mlp (report 001): 32-Hrelu:nobias-1:nobias, MSE, SGD "
             f"lr 0.002 on synth:regression; {'GPU ' + gpu + '; ' if gpu else ''}"
             f"CPU {cpu}; report figures from a Tesla T4; {date}")
    notes = [pc.skipped_rows(rows, "backend", "cuda"), pc.skipped_rows(rows, "backend", "cpu")]
    pc.save(pc.figure(plt, panels, title, ncols=2, panel_size=(6.2, 4.6), notes=notes), dst)


if __name__ == "__main__":
    main()
