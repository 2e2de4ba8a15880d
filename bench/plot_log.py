#!/usr/bin/env python3
"""Plot training curves from the CSV files of `ffnn train --log FILE.csv`.

usage: python3 bench/plot_log.py FILE.csv [FILE2.csv ...] [--out curves.png]
                                 [--labels a,b,...]

Two panels: the loss (train, solid, and test, dashed) per epoch and the test
accuracy per epoch; runs are overlaid, one colour each, labelled by --labels (else
the file names). The accuracy panel is left out when no file has an accuracy
(regression: the column is empty). The PNG is kept under 200 KB (the dpi drops
until it fits). --out defaults to the first CSV with .png. `ffnn plot` runs this.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MAX_BYTES = 200 * 1024
COLUMNS = ["epoch", "train_loss", "test_loss", "test_accuracy", "seconds",
           "images_per_second"]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return math.nan


def load(path):
    """Columns of one --log CSV as lists of floats (nan where empty)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS[:4] if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError("%s: not an ffnn train --log CSV (no column %s)"
                             % (path, ", ".join(missing)))
        rows = list(reader)
    if not rows:
        raise ValueError("%s: no epochs logged yet" % path)
    return {c: [num(r.get(c)) for r in rows] for c in COLUMNS}


def draw(runs, labels, out):
    has_accuracy = any(not math.isnan(a) for run in runs for a in run["test_accuracy"])
    panels = 2 if has_accuracy else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    axes = axes[0]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (run, label) in enumerate(zip(runs, labels)):
        color = colors[i % len(colors)]
        single = len(run["epoch"]) == 1
        marker = "o" if single else None
        axes[0].plot(run["epoch"], run["train_loss"], color=color, marker=marker,
                     label="%s train" % label)
        axes[0].plot(run["epoch"], run["test_loss"], color=color, marker=marker,
                     linestyle="--", label="%s test" % label)
        if has_accuracy and any(not math.isnan(a) for a in run["test_accuracy"]):
            axes[1].plot(run["epoch"], [100.0 * a for a in run["test_accuracy"]],
                         color=color, marker=marker, label=label)
    axes[0].set_title("loss per epoch")
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("loss")
    losses = [v for run in runs for k in ("train_loss", "test_loss") for v in run[k]
              if v > 0 and math.isfinite(v)]
    if losses and max(losses) / min(losses) > 100:
        axes[0].set_yscale("log")
    axes[0].grid(True, alpha=0.3)
    axes[0].legend(fontsize="small")
    if has_accuracy:
        axes[1].set_title("test accuracy per epoch")
        axes[1].set_xlabel("epoch")
        axes[1].set_ylabel("accuracy (%)")
        axes[1].grid(True, alpha=0.3)
        axes[1].legend(fontsize="small")
    for ax in axes:
        ax.xaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
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
    size = draw(runs, labels, out)
    print("wrote %s (%d bytes)" % (out, size))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
