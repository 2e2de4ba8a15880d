#!/usr/bin/env python3
"""ffnn's training features against PyTorch: a schedule run, an AdamW run, a clipped
run and a dropout run on Fashion-MNIST, ffnn (CLI) and PyTorch with the same hyperparameters,
over several seeds; prints a markdown table of the final test accuracy (mean, std,
per seed) and writes one JSON line per run.

Each system uses its own initialisation and shuffling (seeded by the seed): the
comparison is of the method, not the bits (tests/torch_twin.py checks the bits).

usage: features_vs_torch.py DATA_DIR --ffnn build/ffnn [--seeds 1 2 3] [--epochs 10]
       [--device cuda|cpu] [--runs schedule,adamw,clip,dropout] [--out runs.jsonl]
       [--train-limit N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

from idx_files import find_idx, read_idx

# name: (ffnn flags, arch, description); the PyTorch side reads the same dict
RUNS = {
    "schedule": dict(arch="784-256relu-10", optimizer="momentum", lr=0.05, momentum=0.9,
                     schedule="cosine", warmup=200,
                     what="SGD momentum 0.9, lr 0.05, cosine to 0 over the run, 200 warm-up steps"),
    "adamw": dict(arch="784-256relu-10", optimizer="adamw", lr=1e-3, weight_decay=0.05,
                  what="AdamW lr 1e-3, weight_decay 0.05"),
    "clip": dict(arch="784-256relu-10", optimizer="sgd", lr=0.2, clip_norm=1.0,
                 what="SGD lr 0.2, clip_grad_norm 1.0"),
    "dropout": dict(arch="784-512relu:dropout0.2-256relu:dropout0.2-10", optimizer="momentum",
                    lr=0.02, momentum=0.9,
                    what="784-512-256-10, dropout 0.2 after each hidden layer, momentum"),
}


def ffnn_flags(r):
    a = ["--arch", r["arch"], "--optimizer", r["optimizer"], "--lr", str(r["lr"])]
    if r.get("momentum") is not None:
        a += ["--momentum", str(r["momentum"])]
    if r.get("weight_decay") is not None:
        a += ["--weight-decay", str(r["weight_decay"])]
    if r.get("schedule"):
        a += ["--lr-schedule", r["schedule"]]
    if r.get("warmup"):
        a += ["--warmup-steps", str(r["warmup"])]
    if r.get("clip_norm"):
        a += ["--clip-grad-norm", str(r["clip_norm"])]
    return a


def run_ffnn(args, name, r, seed):
    cmd = [args.ffnn, "train", "--data", args.data, "--epochs", str(args.epochs), "--batch",
           "64", "--seed", str(seed), "--device", args.device, "--json"] + ffnn_flags(r)
    if args.train_limit:
        cmd += ["--train-limit", str(args.train_limit)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"ffnn failed: {' '.join(cmd)}\n{p.stderr}")
    last = json.loads(p.stdout.strip().splitlines()[-1])
    return last["test_accuracy"], time.time() - t0, " ".join(cmd[1:])


def build_torch(arch):
    tokens = arch.split("-")
    fan_in, layers = int(tokens[0]), []
    for tok in tokens[1:]:
        width_str, *opts = tok.split(":")
        digits = len(width_str) - len(width_str.lstrip("0123456789"))
        width, act = int(width_str[:digits]), width_str[digits:]
        layers.append(torch.nn.Linear(fan_in, width))
        if act == "relu":
            layers.append(torch.nn.ReLU())
        for o in opts:
            if o.startswith("dropout"):
                layers.append(torch.nn.Dropout(float(o[7:])))
        fan_in = width
    return torch.nn.Sequential(*layers)


def run_torch(args, r, seed, data):
    dev = args.device
    torch.manual_seed(seed)
    x, y, xt, yt = (t.to(dev) for t in data)
    model = build_torch(r["arch"]).to(dev)
    o = r["optimizer"]
    if o == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=r["lr"], weight_decay=r["weight_decay"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=r["lr"], momentum=r.get("momentum", 0.0),
                              weight_decay=r.get("weight_decay", 0.0))
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
             if r.get("schedule") == "cosine" else None)
    n, k, warm = x.shape[0], 0, r.get("warmup", 0)
    t0 = time.time()
    for _ in range(args.epochs):
        model.train()
        base = [g["lr"] for g in opt.param_groups]
        perm = torch.randperm(n, device=dev)
        for first in range(0, n, 64):
            idx = perm[first:first + 64]
            for g, lr in zip(opt.param_groups, base):
                g["lr"] = lr * (k + 1) / warm if k < warm else lr
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            if r.get("clip_norm"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), r["clip_norm"])
            opt.step()
            k += 1
        for g, lr in zip(opt.param_groups, base):
            g["lr"] = lr
        if sched:
            sched.step()
    model.eval()
    with torch.no_grad():
        acc = (model(xt).argmax(1) == yt).float().mean().item()
    return acc, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--ffnn", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--runs", default="schedule,adamw,clip,dropout")
    ap.add_argument("--train-limit", type=int, default=0)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    x = read_idx(find_idx(args.data, "train-images-idx3-ubyte"))
    y = read_idx(find_idx(args.data, "train-labels-idx1-ubyte"))
    if args.train_limit:
        x, y = x[:args.train_limit], y[:args.train_limit]
    xt = read_idx(find_idx(args.data, "t10k-images-idx3-ubyte"))
    yt = read_idx(find_idx(args.data, "t10k-labels-idx1-ubyte"))
    data = (torch.tensor(x.reshape(len(x), -1), dtype=torch.float32) / 255.0,
            torch.tensor(y.astype(np.int64)),
            torch.tensor(xt.reshape(len(xt), -1), dtype=torch.float32) / 255.0,
            torch.tensor(yt.astype(np.int64)))
    out = open(args.out, "w") if args.out else None
    print(f"Fashion-MNIST, {len(x)} training samples, batch 64, {args.epochs} epochs, "
          f"device {args.device}, seeds {args.seeds}; torch {torch.__version__}\n")
    print("| run | system | test accuracy % (mean ± std) | per seed | s/run |")
    print("|---|---|---|---|---|")
    for name in args.runs.split(","):
        r = RUNS[name]
        res = {"ffnn": [], "torch": []}
        secs = {"ffnn": [], "torch": []}
        command = ""
        for s in args.seeds:
            a, t, command = run_ffnn(args, name, r, s)
            res["ffnn"].append(100 * a)
            secs["ffnn"].append(t)
            a, t = run_torch(args, r, s, data)
            res["torch"].append(100 * a)
            secs["torch"].append(t)
            for sy in ("ffnn", "torch"):
                if out:
                    out.write(json.dumps({"run": name, "system": sy, "seed": s,
                                          "test_accuracy": res[sy][-1] / 100,
                                          "seconds": secs[sy][-1]}) + "\n")
        for sy in ("ffnn", "torch"):
            a = res[sy]
            sd = statistics.stdev(a) if len(a) > 1 else 0.0
            print(f"| {name}: {r['what']} | {sy} | {statistics.mean(a):.2f} ± {sd:.2f} | "
                  f"{', '.join(f'{v:.2f}' for v in a)} | {statistics.mean(secs[sy]):.1f} |")
        print(f"|  | command | `ffnn {command.replace('--seed ' + str(args.seeds[-1]), '--seed S')}` | | |")
    if out:
        out.close()


if __name__ == "__main__":
    main()
