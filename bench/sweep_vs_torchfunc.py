#!/usr/bin/env python3
"""sweep_vs_torchfunc.py - many models of one network trained at once on one GPU,
ffnn against torch.func, in the same call (Fashion-MNIST, 784-256relu-10, plain
SGD, each model its own learning rate, log-spaced 1e-3 .. 1e-1):

  ffnn       ffnn sweep --device cuda --lr <N rates> --threads LANES: every model
             its own trainer (streams, buffers) and LANES host threads queueing
             their models' steps at once (each model bit for bit its lone run);
             with --strategy batched one engine for all the models, one kernel
             launch per op over the model axis (no lanes)
  torch.func stack_module_state + vmap(grad(functional_call)) over the N models,
             every model the same batch (the cheapest for torch), the update
             p -= lr[:, None] g in one fused step; eager and torch.compile

Time per epoch without start-up: ffnn runs once with 1 epoch and once with
1 + E epochs, and the difference of the training times it prints is E epochs
(the first epoch's lazy set-up, graph capture, cancels; CUDA context, data
loading and trainer set-up are outside the training time); torch times E epochs after one warm-up epoch
(the compile). model-epochs/s = N / (seconds per epoch). FLOP per model-epoch:
rows x (4 x (784 x 256 + 256 x 10) + 2 x 256 x 10) (forward and weight gradients
of both layers, the input gradient of the second): 48.5 GFLOP.

usage: sweep_vs_torchfunc.py --data DIR [--ffnn build/ffnn] [--models 1,16,256]
       [--batch 64,1024] [--lanes 1,16] [--strategy auto] [--epochs 2] [--torch eager,compile]
Prints one markdown table row per system and cell.
"""
import argparse
import gzip
import os
import re
import subprocess
import sys
import time

import numpy as np

ROWS = 60000
# forward and weight-gradient matmuls of both layers, the input gradient of the
# second only (the first layer's dx is not needed)
FLOP_PER_MODEL_EPOCH = ROWS * (4 * (784 * 256 + 256 * 10) + 2 * 256 * 10)


def rates(n):
    return [float(f"{x:.6g}") for x in np.logspace(-3, -1, n)] if n > 1 else [0.01]


def ffnn_seconds(a, n, batch, lanes, strategy, epochs, precision):
    cmd = [a.ffnn, "sweep", "--data", a.data, "--arch", "784-256relu-10", "--device", "cuda",
           "--batch", str(batch), "--optimizer", "sgd", "--lr", ",".join(map(str, rates(n))),
           "--threads", str(lanes), "--strategy", strategy, "--precision", precision,
           "--epochs", str(epochs), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... ({n} models, batch {batch}, {lanes} lanes, "
                           f"{strategy}): {r.stderr.strip()[-400:]}")
    m = re.search(r"model-epochs in ([0-9.]+) s of training", r.stderr)
    if not m:
        raise RuntimeError(f"no training time in ffnn sweep's output: {r.stderr[-400:]}")
    return float(m.group(1))


def load_idx(d):
    def read(name, off):
        p = os.path.join(d, name)
        with (gzip.open(p + ".gz") if os.path.exists(p + ".gz") else open(p, "rb")) as f:
            return np.frombuffer(f.read(), np.uint8)[off:]
    x = read("train-images-idx3-ubyte", 16).reshape(-1, 784)
    y = read("train-labels-idx1-ubyte", 8)
    return x, y


def torch_seconds(n, batch, epochs, mode, x_u8, y_np, precision):
    import torch
    from torch.func import functional_call, grad, stack_module_state, vmap
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    dev = "cuda"
    x = torch.tensor(x_u8, device=dev).float().div_(255)
    y = torch.tensor(y_np.astype(np.int64), device=dev)
    nets = [torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).to(dev) for _ in range(n)]
    params, _ = stack_module_state(nets)
    params = {k: v.detach() for k, v in params.items()}
    base = nets[0].to("meta")
    lr = torch.tensor(rates(n), device=dev)

    def loss(p, xb, yb):  # bf16: the matmuls under autocast, fp32 master weights
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = functional_call(base, p, (xb,))
        return torch.nn.functional.cross_entropy(logits.float(), yb)

    g = vmap(grad(loss), in_dims=(0, None, None))

    def step(p, xb, yb):
        gr = g(p, xb, yb)
        return {k: p[k] - lr.view(-1, *([1] * (p[k].dim() - 1))) * gr[k] for k in p}

    if mode == "compile":
        step = torch.compile(step)
    steps = ROWS // batch  # full batches (the last partial one is left out on this side)

    def epoch(p):
        perm = torch.randperm(ROWS, device=dev)
        for s in range(steps):
            idx = perm[s * batch:(s + 1) * batch]
            p = step(p, x[idx], y[idx])
        return p

    params = epoch(params)  # warm-up (compiles)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(epochs):
        params = epoch(params)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / epochs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="directory of the Fashion-MNIST IDX files (.gz or not)")
    ap.add_argument("--ffnn", default="build/ffnn", help="the ffnn program (default %(default)s)")
    ap.add_argument("--models", default="1,16,256", help="comma-separated model counts (default %(default)s)")
    ap.add_argument("--batch", default="64,1024", help="comma-separated batch sizes (default %(default)s)")
    ap.add_argument("--lanes", default="1,16", help="comma-separated lane counts of ffnn sweep --threads (default %(default)s; batched: 1)")
    ap.add_argument("--strategy", default="auto", help="comma-separated ffnn strategies, e.g. auto,cublaslt,batched (default %(default)s)")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16"], help="both sides' precision (torch: allow_tf32, or bf16 autocast of the forward; default %(default)s)")
    ap.add_argument("--epochs", type=int, default=2, help="timed epochs after the warm-up (default %(default)s)")
    ap.add_argument("--torch", default="eager,compile", help="torch.func modes, comma-separated; '' for none (default %(default)s)")
    a = ap.parse_args()
    x, y = load_idx(a.data)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 784-256relu-10, sgd, "
          f"{a.precision}; {a.epochs} timed epochs")
    print("| models | batch | system | s/epoch | model-epochs/s | TFLOP/s |")
    print("|---|---|---|---|---|---|")
    def row(n, batch, name, s):
        print(f"| {n} | {batch} | {name} | {s:.3f} | {n / s:.1f} | "
              f"{n * FLOP_PER_MODEL_EPOCH / s / 1e12:.2f} |", flush=True)

    for batch in map(int, a.batch.split(",")):
        for n in map(int, a.models.split(",")):
            for lanes in map(int, a.lanes.split(",")):
                for strat in a.strategy.split(","):
                    if strat == "batched" and lanes != int(a.lanes.split(",")[0]):
                        continue  # one engine for every model: no lanes
                    try:
                        t1 = ffnn_seconds(a, n, batch, lanes, strat, 1, a.precision)
                        t2 = ffnn_seconds(a, n, batch, lanes, strat, 1 + a.epochs, a.precision)
                        name = (f"ffnn sweep {strat}" if strat == "batched"
                                else f"ffnn sweep {strat}, {lanes} lanes")
                        row(n, batch, name, (t2 - t1) / a.epochs)
                    except RuntimeError as e:
                        print(f"# ffnn failed: {e}", file=sys.stderr)
            for mode in filter(None, a.torch.split(",")):
                try:
                    row(n, batch, f"torch.func {mode}",
                        torch_seconds(n, batch, a.epochs, mode, x, y, a.precision))
                except Exception as e:  # noqa: BLE001 - report and go on
                    print(f"# torch {mode} failed: {e}", file=sys.stderr)

if __name__ == "__main__":
    main()
