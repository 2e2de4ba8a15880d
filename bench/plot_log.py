#!/usr/bin/env python3
"""Plot training curves from the CSV files of `ffnn train --log FILE.csv`.

usage: python3 bench/plot_log.py FILE.csv [FILE2.csv ...] [--out curves.png]
                                 [--labels a,b,...]

Two panels: the loss (train, solid, and the held-out set's, dashed) per epoch and the
held-out accuracy per epoch. The held-out set is the test set, or the validation set
of a run with --val-split (its log has val_loss,val_accuracy); runs are overlaid, one
colour each, labelled by --labels (else the file names). The accuracy panel is left
out when no file has an accuracy (regression: the column is empty), and the figure
says so. The PNG is kept under 200 KB (the dpi drops until it fits). --out defaults to
the first CSV with .png. `ffnn plot` runs this. Needs matplotlib (Debian:
python3-matplotlib).
"""
import argparse
import csv
import math
import os
import sys

import plot_common as pc

MAX_BYTES = pc.MAX_BYTES
COLUMNS = ["epoch", "train_loss", "loss", "accuracy", "seconds", "images_per_second"]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def load(path):
    """Columns of one --log CSV as lists of floats (nan where empty); "loss" and
    "accuracy" are the held-out set's (test_ or val_ in the file), "held_out" says
    which ("test" or "validation")."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        names = reader.fieldnames or []
        prefix = "val_" if "val_loss" in names else "test_"
        need = ["epoch", "train_loss", prefix + "loss", prefix + "accuracy"]
        missing = [c for c in need if c not in names]
        if missing:
            raise ValueError("%s: not an ffnn train --log CSV (no column %s)"
                             % (path, ", ".join(missing)))
        rows = list(reader)
    if not rows:
        raise ValueError("%s: no epochs logged yet" % path)
    run = {c: [num(r.get(prefix + c if c in ("loss", "accuracy") else c)) for r in rows]
           for c in COLUMNS}
    run["held_out"] = "validation" if prefix == "val_" else "test"
    return run


def draw(plt, runs, labels, out):
    has_accuracy = any(not math.isnan(a) for run in runs for a in run["accuracy"])
    panels = 2 if has_accuracy else 1
    kinds = sorted({run["held_out"] for run in runs})
    held = " / ".join(kinds)
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.3), squeeze=False)
    axes = axes[0]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (run, label) in enumerate(zip(runs, labels)):
        color = colors[i % len(colors)]
        single = len(run["epoch"]) == 1
        marker = "o" if single else None
        axes[0].plot(run["epoch"], run["train_loss"], color=color, marker=marker,
                     label="%s train" % label)
        axes[0].plot(run["epoch"], run["loss"], color=color, marker=marker,
                     linestyle="--", label="%s %s" % (label, run["held_out"]))
        if has_accuracy and any(not math.isnan(a) for a in run["accuracy"]):
            axes[1].plot(run["epoch"], [100.0 * a for a in run["accuracy"]],
                         color=color, marker=marker,
                         label=label if len(kinds) == 1 else "%s %s" % (label, run["held_out"]))
    axes[0].set_title("loss per epoch (train, %s)" % held, fontsize=10)
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("loss")
    losses = [v for run in runs for k in ("train_loss", "loss") for v in run[k]
              if v > 0 and math.isfinite(v)]
    if losses and max(losses) / min(losses) > 100:
        axes[0].set_yscale("log")
    axes[0].grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    if has_accuracy:
        axes[1].set_title("%s accuracy per epoch" % held, fontsize=10)
        axes[1].set_xlabel("epoch")
        axes[1].set_ylabel("accuracy (%)")
        axes[1].grid(True, alpha=0.3)
        axes[1].legend(fontsize="small")
    for ax in axes:
        ax.xaxis.get_major_locator().set_params(integer=True)
    bottom = 0.0
    if not has_accuracy:
        fig.text(0.01, 0.01, "not drawn: the accuracy panel (no accuracy in the logs: a "
                 "regression run)", fontsize=8, color="dimgray")
        bottom = 0.06
    fig.tight_layout(rect=(0, bottom, 1, 1))
    for dpi in (150, 120, 100, 80, 60, 50, 40):
        fig.savefig(out, dpi=dpi)
        if os.path.getsize(out) <= MAX_BYTES:
            break
    plt.close(fig)
    return os.path.getsize(out)


def main(argv):
    p = argparse.ArgumentParser(description="Plot ffnn train --log CSV files.")
    p.add_argument("csv", nargs="+", help="CSV files of ffnn train --log")
    p.add_argument("--out", help="PNG to write (default: the first CSV with .png)")
    p.add_argument("--labels", help="comma-separated legend labels, one per file")
    a = p.parse_args(argv)
    labels = a.labels.split(",") if a.labels else [os.path.basename(f) for f in a.csv]
    if len(labels) != len(a.csv):
        p.error("--labels has %d labels for %d files" % (len(labels), len(a.csv)))
    out = a.out or os.path.splitext(a.csv[0])[0] + ".png"
    try:
        runs = [load(f) for f in a.csv]
    except (OSError, ValueError) as e:
        print("plot_log.py: %s" % e, file=sys.stderr)
        return 1
    size = draw(pc.pyplot(), runs, labels, out)
    print("wrote %s (%d bytes)" % (out, size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
