#!/usr/bin/env python3
"""ffnn against PyTorch, same GPU, same call: training speed of small MLPs.

For each (arch, batch): PyTorch in the requested --torch-modes and ffnn in each
requested --strategy, on the same data (Fashion-MNIST, resident on the GPU), the same
network, batch size and number of steps (one epoch = ceil(60000/batch) steps), SGD.
PyTorch modes:
  eager          plain PyTorch, SGD (foreach), TF32 off
  step_graph     the train step captured in one CUDA graph
  epoch_graph    a whole epoch (gather included) captured in one CUDA graph
  compile_graph  the strongest PyTorch a user would run: torch.compile of the model
                 (default mode), fused SGD (SGD(fused=True)), the batch gathered by
                 index_select and the whole step captured in one CUDA graph
  MODE:tf32      TF32 tensor-core matmuls (allow_tf32) for that row
  MODE:bf16      bf16 autocast of forward and loss (fp32 master weights and SGD)
ffnn modes: a --strategy name, optionally :tf32 / :bf16 / :tf32x3 for --precision;
tf32x3 (fp32's accuracy on the TF32 tensor cores) is compared with the fp32 rows.
Times: one warm-up epoch, then the median of --epochs timed epochs (torch: CUDA events;
ffnn: its synchronised per-epoch seconds). Accuracy: test accuracy after the run, for
every row. Each row also carries the % of its precision's ceiling (FP32 / TF32 / BF16
8192^3 matmul measured with torch at the start of the same call, --ceilings).
ffnn's `tune` mode (auto by measurement) times its candidates when the trainer is
created, before the warm-up epoch; its measurement and pick are printed to stderr.

usage: vs_torch.py DATA_DIR --ffnn build/ffnn [--configs 784-256relu-10:64,...]
       [--strategy tiled,naive] [--epochs 5] [--out build/bench/vs_torch.json]
Prints one table; writes the rows as a JSON list.
"""
import argparse
import sys
import datetime
import json
import os
import statistics
import subprocess

import numpy as np
import torch

from idx_files import find_idx, read_idx

def measure_ceilings(dev, n=8192, reps=10):
    """FLOP/s of an n^3 matmul in fp32 (no tensor cores), tf32 and bf16: the dense
    ceilings each row is compared with (best of reps, CUDA events)."""
    out = {}
    for name, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                              ("bf16", torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        torch.matmul(a, b)
        best = float("inf")
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            torch.cuda.synchronize()
            best = min(best, s.elapsed_time(e) * 1e-3)
        out[name] = 2 * n ** 3 / best
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    return out


def widths(arch):
    """[784, 256, 10] and activations from an ffnn dense architecture string."""
    toks = arch.split("-")
    ws, acts = [int(toks[0])], []
    for t in toks[1:]:
        d = len(t) - len(t.lstrip("0123456789"))
        ws.append(int(t[:d]))
        acts.append(t[d:] or "identity")
    return ws, acts


def flop_per_sample(arch):
    """6 x multiply-adds per sample for forward + backward (BENCHMARKS.md convention)."""
    ws, _ = widths(arch)
    return 6 * sum(a * b for a, b in zip(ws, ws[1:]))


def torch_model(arch, dev):
    ws, acts = widths(arch)
    layers = []
    for (a, b), act in zip(zip(ws, ws[1:]), acts):
        layers.append(torch.nn.Linear(a, b))
        if act == "relu":
            layers.append(torch.nn.ReLU())
        elif act != "identity":
            raise ValueError(act)
    return torch.nn.Sequential(*layers).to(dev)


def torch_run(mode, arch, batch, lr, epochs, data, seed=1):
    """Train with PyTorch in `mode` (see the module doc); returns (ms per epoch list,
    test accuracy). The tf32 switch is restored on return."""
    mode, _, precision = mode.partition(":")
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        return torch_run_mode(mode, precision, arch, batch, lr, epochs, data, seed)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


def torch_run_mode(mode, precision, arch, batch, lr, epochs, data, seed):
    xtr, ytr, xte, yte = data
    n = len(xtr)
    torch.manual_seed(seed)
    model = torch_model(arch, xtr.device)
    compiled = mode == "compile_graph"
    if compiled:  # a fresh compile per row: dynamo's recompile limit (8 per process)
        torch._dynamo.reset()  # would otherwise leave later rows running eagerly
    opt = torch.optim.SGD(model.parameters(), lr=lr, fused=compiled)
    net = torch.compile(model) if compiled else model
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = (n + batch - 1) // batch
    perm = torch.randperm(n, device=xtr.device)

    def forward_loss(xb, yb):
        if precision == "bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return loss_fn(net(xb), yb)
        return loss_fn(net(xb), yb)

    def step(i):
        idx = perm[i * batch:(i + 1) * batch]
        loss = forward_loss(xtr.index_select(0, idx), ytr.index_select(0, idx))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
        return loss

    def eager_epoch():
        perm.copy_(torch.randperm(n, device=xtr.device))
        for i in range(steps):
            step(i)

    run_epoch = eager_epoch
    if mode not in ("eager", "step_graph", "epoch_graph", "compile_graph"):
        raise ValueError(f"unknown torch mode {mode}")
    if mode in ("step_graph", "epoch_graph", "compile_graph"):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm-up outside the graph (and compilation)
            for i in range(3):
                step(i)
            if compiled and n % batch:
                step(steps - 1)  # the partial last batch compiles here, not in timing
        torch.cuda.current_stream().wait_stream(s)
        if mode in ("step_graph", "compile_graph"):
            # full batches in one graph; the last partial batch eagerly
            full = n // batch
            slot = torch.zeros(1, dtype=torch.long, device=xtr.device)
            ar = torch.arange(batch, device=xtr.device)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                idx = perm[slot * batch + ar]
                loss = forward_loss(xtr.index_select(0, idx), ytr.index_select(0, idx))
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=False)

            def graph_step_epoch():
                perm.copy_(torch.randperm(n, device=xtr.device))
                for i in range(full):
                    slot.fill_(i)
                    g.replay()
                for i in range(full, steps):
                    step(i)
            run_epoch = graph_step_epoch
        else:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(steps):
                    step(i)

            def graph_epoch():
                perm.copy_(torch.randperm(n, device=xtr.device))
                g.replay()
            run_epoch = graph_epoch
    times = []
    for e in range(epochs + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run_epoch()
        end.record()
        torch.cuda.synchronize()
        if e > 0:
            times.append(start.elapsed_time(end))
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    return times, acc


def expand_arch(arch):
    """'784-128relux8-10' -> '784-128relu-...-128relu-10' (a layer repeated N times)."""
    out = []
    for t in arch.split("-"):
        body, x, rep = t.rpartition("x")
        out += [body] * int(rep) if x and rep.isdigit() and body else [t]
    return "-".join(out)


def ffnn_run(ffnn, data_dir, mode, arch, batch, lr, epochs):
    """mode: a --strategy name, optionally ':tf32' / ':bf16' for --precision.
    Returns (ms per timed epoch, test accuracy), or None when ffnn refuses the
    mode for this network (its message is printed)."""
    strategy, _, precision = mode.partition(":")
    cmd = [ffnn, "train", "--data", data_dir, "--arch", arch, "--batch", str(batch), "--lr",
           str(lr), "--epochs", str(epochs + 1), "--device", "cuda", "--strategy", strategy,
           "--precision", precision or "fp32", "--json", "--seed", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"ffnn {mode} {arch} batch {batch}: {r.stderr.strip()}", file=sys.stderr)
        return None
    for line in r.stderr.splitlines():  # --strategy tune: its measurement and pick
        if line.startswith("tune:"):
            print(f"ffnn {mode} {arch} batch {batch}: {line}", file=sys.stderr)
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    return [1e3 * x["seconds"] for x in rows[1:]], rows[-1]["test_accuracy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--ffnn", required=True)
    ap.add_argument("--configs", default="784-256relu-10:64,784-256relu-10:256,"
                    "784-256relu-10:1024,784-1024relu-1024relu-10:1024")
    ap.add_argument("--strategy", "--kernels", dest="strategy",
                    default="auto,persistent,graph,fused,cublas,tiled,"
                    "cublas:tf32,cublas:bf16,graph:tf32",
                    help="ffnn modes: --strategy names (tune: auto by measurement, its "
                    "measurement printed), NAME:tf32 / NAME:bf16 for --precision "
                    "(--kernels: an alias)")
    ap.add_argument("--torch-modes", default="eager,step_graph,epoch_graph,compile_graph,"
                    "compile_graph:tf32,compile_graph:bf16")
    ap.add_argument("--ceilings", default="measure",
                    help="'measure' (8192^3 matmuls with torch, same call) or "
                    "FP32,TF32,BF16 in TFLOP/s")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--out", default="build/bench/vs_torch.json")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    if a.ceilings == "measure":
        ceilings = measure_ceilings(dev)
    else:
        ceilings = dict(zip(("fp32", "tf32", "bf16"),
                            (float(v) * 1e12 for v in a.ceilings.split(","))))
    print("ceilings (TFLOP/s): " + ", ".join(f"{k} {v / 1e12:.0f}" for k, v in ceilings.items()),
          file=sys.stderr)
    gpu = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    x = read_idx(find_idx(a.data, "train-images-idx3-ubyte"))
    y = read_idx(find_idx(a.data, "train-labels-idx1-ubyte"))
    xt = read_idx(find_idx(a.data, "t10k-images-idx3-ubyte"))
    yt = read_idx(find_idx(a.data, "t10k-labels-idx1-ubyte"))
    data = (torch.tensor(x.reshape(len(x), -1), device=dev).float() / 255,
            torch.tensor(y.astype(np.int64), device=dev),
            torch.tensor(xt.reshape(len(xt), -1), device=dev).float() / 255,
            torch.tensor(yt.astype(np.int64), device=dev))
    n = len(x)
    rows = []
    for cfg in a.configs.split(","):
        arch, batch = cfg.rsplit(":", 1)
        arch, batch = expand_arch(arch), int(batch)
        steps = (n + batch - 1) // batch
        flop = flop_per_sample(arch) * n
        group = []
        for mode in a.torch_modes.split(","):
            try:
                t, acc = torch_run(mode, arch, batch, a.lr, a.epochs, data)
            except Exception as e:  # a mode PyTorch cannot run here: say so, keep going
                print(f"torch {mode} {arch} batch {batch}: {type(e).__name__}: {e}",
                      file=sys.stderr)
                continue
            group.append(("torch", mode, t, acc))
        for k in a.strategy.split(","):
            got = ffnn_run(a.ffnn, a.data, k, arch, batch, a.lr, a.epochs)
            if got is not None:
                group.append(("ffnn", k, got[0], got[1]))
        torch_ms = [statistics.median(t) for s, _, t, _ in group if s == "torch"]
        best_torch = min(torch_ms) if torch_ms else float("nan")
        for system, mode, t, acc in group:
            ms = statistics.median(t)
            precision = mode.partition(":")[2] or "fp32"
            # tf32x3 (ffnn's fp32-accurate 3xTF32) is held to fp32: its torch rows and
            # ceiling are fp32's (the accuracy a user asked for, not the units used)
            klass = "fp32" if precision == "tf32x3" else precision
            # best torch row of the same precision (fp32 rows: every fp32 torch mode)
            same = [statistics.median(tt) for s, m, tt, _ in group
                    if s == "torch" and (m.partition(":")[2] or "fp32") == klass]
            best_same = min(same) if same else float("nan")
            rows.append(dict(system=system, mode=mode, arch=arch, batch=batch,
                             ms_per_epoch=round(ms, 4), us_per_step=round(1e3 * ms / steps, 3),
                             gflops=round(flop / (ms * 1e-3) / 1e9, 1),
                             pct_fp32_ceiling=round(100 * flop / (ms * 1e-3) / ceilings["fp32"], 2),
                             precision=precision,
                             pct_ceiling=round(100 * flop / (ms * 1e-3) / ceilings[klass], 2),
                             ratio_to_best_torch=round(best_torch / ms, 3),
                             ratio_to_best_torch_same_precision=round(best_same / ms, 3),
                             test_accuracy=round(acc, 4), epochs_timed=len(t), gpu=gpu,
                             date=date, torch=torch.__version__,
                             ceiling_tflops=round(ceilings[klass] / 1e12, 1)))
    hdr = ("system", "mode", "arch", "batch", "ms_per_epoch", "us_per_step", "gflops",
           "precision", "pct_ceiling", "ratio_to_best_torch_same_precision", "test_accuracy")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in rows:
        print("| " + " | ".join(str(r[h]) for h in hdr) + " |")
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
