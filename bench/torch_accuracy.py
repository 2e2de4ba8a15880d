#!/usr/bin/env python3
"""PyTorch twin of `ffnn train` for the configuration of report 000, for accuracy
comparisons in the same device call: 784-256-10 (ReLU), softmax cross-entropy,
mini-batch SGD, a fresh permutation per epoch, last partial batch included,
PyTorch's default nn.Linear init, data resident on the GPU, TF32 off.

usage: torch_accuracy.py DATA_DIR --lr 0.1 --seeds 1 2 3 [--epochs 10 --batch 64 --arch A]
Prints one JSON line per seed with the final test accuracy and seconds per epoch."""
import argparse
import json
import os
import time

import numpy as np
import torch

from idx_files import find_idx, read_idx


def build(arch):
    """nn.Sequential of Linear (+ ReLU) layers from an ffnn dense architecture string."""
    toks = arch.split("-")
    layers, fan_in = [], int(toks[0])
    for t in toks[1:]:
        d = len(t) - len(t.lstrip("0123456789"))
        layers.append(torch.nn.Linear(fan_in, int(t[:d])))
        if t[d:] == "relu":
            layers.append(torch.nn.ReLU())
        fan_in = int(t[:d])
    return torch.nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--arch", default="784-256relu-10",
                    help="dense ffnn architecture string (relu or identity layers)")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    xs = {}
    for part, prefix in (("train", "train"), ("test", "t10k")):
        img = read_idx(find_idx(a.data, f"{prefix}-images-idx3-ubyte"))
        lab = read_idx(find_idx(a.data, f"{prefix}-labels-idx1-ubyte"))
        xs[part] = (torch.tensor(img.reshape(len(img), -1), device=dev).float() / 255.0,
                    torch.tensor(lab.astype(np.int64), device=dev))
    xtr, ytr = xs["train"]
    xte, yte = xs["test"]
    n = len(xtr)
    for seed in a.seeds:
        torch.manual_seed(seed)
        model = build(a.arch).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=a.lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        times = []
        for _ in range(a.epochs):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            perm = torch.randperm(n, device=dev)
            for i in range(0, n, a.batch):
                idx = perm[i:i + a.batch]
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(xtr[idx]), ytr[idx])
                loss.backward()
                opt.step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(json.dumps({"system": "torch", "mode": "eager", "arch": a.arch, "batch": a.batch,
                          "lr": a.lr, "seed": seed,
                          "test_accuracy": acc, "s_per_epoch_median": float(np.median(times[1:])),
                          "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}),
              flush=True)


if __name__ == "__main__":
    main()
