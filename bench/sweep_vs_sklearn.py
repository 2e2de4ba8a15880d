#!/usr/bin/env python3
"""sweep_vs_sklearn.py - a hyperparameter grid with 5-fold cross-validation on the
digits data (1797 x 64, 10 classes; Debian's python3-sklearn ships it), the same
grid and network in the same call:

  ffnn     ffnn sweep --cv 5: every configuration x fold in one process
  sklearn  GridSearchCV(MLPClassifier, cv=StratifiedKFold(5), n_jobs=-1)

Network 64-64relu-10, Adam, every epoch run (sklearn: tol=0 and n_iter_no_change =
max_iter, so it never stops early), features scaled to [0, 1] (pixels / 16: ffnn
--standardize would differ from sklearn; both get the same scaled file). The grid:
learning rates x batch sizes x seeds (64 configurations by default). Prints wall
time, the best configuration's mean fold accuracy, and the mean over the grid, each
side; the ratio of the wall times.

usage: sweep_vs_sklearn.py [--ffnn build/ffnn] [--epochs 30] [--threads N]
"""
import argparse
import gzip
import json
import os
import subprocess
import tempfile
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neural_network import MLPClassifier

DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
LRS = [0.001, 0.003, 0.01, 0.03]
BATCHES = [16, 32, 64, 128]
SEEDS = [1, 2, 3, 4]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ffnn", default="build/ffnn", help="the ffnn program (default %(default)s)")
    ap.add_argument("--epochs", type=int, default=30, help="epochs of every model, both sides (default %(default)s)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="ffnn sweep --threads (default: the cores, %(default)s); sklearn: n_jobs=-1")
    a = ap.parse_args()
    with gzip.open(DIGITS, "rt") as f:
        d = np.loadtxt(f, delimiter=",")
    X, y = (d[:, :-1] / 16.0).astype(np.float32), d[:, -1].astype(np.int64)
    tmp = tempfile.mkdtemp(prefix="ffnn-sweep-")
    path = os.path.join(tmp, "digits01.csv")
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.9g")
    grid = len(LRS) * len(BATCHES) * len(SEEDS)
    print(f"# {os.cpu_count()} cpus, {a.threads} threads; digits {X.shape}, 64-64relu-10, adam, "
          f"{a.epochs} epochs, {grid} configurations x 5 folds; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")

    cmd = [a.ffnn, "sweep", "--data", path, "--cv", "5", "--arch", "64-64relu-10",
           "--optimizer", "adam", "--epochs", str(a.epochs), "--device", "cpu",
           "--threads", str(a.threads), "--lr", ",".join(map(str, LRS)),
           "--batch", ",".join(map(str, BATCHES)), "--seed", ",".join(map(str, SEEDS)),
           "--json", "--quiet"]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    t_ffnn = time.perf_counter() - t
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    acc_ffnn = [x["val_accuracy"] for x in rows]
    best_ffnn = max(rows, key=lambda x: x["val_accuracy"])

    mlp = MLPClassifier(hidden_layer_sizes=(64,), activation="relu", solver="adam", alpha=0.0,
                        max_iter=a.epochs, tol=0.0, n_iter_no_change=a.epochs, shuffle=True)
    gs = GridSearchCV(mlp, {"learning_rate_init": LRS, "batch_size": BATCHES,
                            "random_state": SEEDS},
                      cv=StratifiedKFold(5), n_jobs=-1, scoring="accuracy")
    import warnings
    warnings.filterwarnings("ignore")
    t = time.perf_counter()
    gs.fit(X, y)
    t_sk = time.perf_counter() - t
    acc_sk = gs.cv_results_["mean_test_score"]

    print("| system | wall s | best mean fold accuracy (its settings) | mean over the grid |")
    print("|---|---|---|---|")
    print(f"| ffnn sweep --cv 5 | {t_ffnn:.2f} | {best_ffnn['val_accuracy']:.4f} "
          f"({best_ffnn['settings']}) | {np.mean(acc_ffnn):.4f} |")
    print(f"| GridSearchCV(MLPClassifier), n_jobs=-1 | {t_sk:.2f} | {gs.best_score_:.4f} "
          f"({gs.best_params_}) | {np.mean(acc_sk):.4f} |")
    print(f"ffnn is {t_sk / t_ffnn:.1f}x faster")


if __name__ == "__main__":
    main()
