#!/usr/bin/env python3
"""PyTorch DistributedDataParallel twin of ffnn's data-parallel runs (bench/scaling.sh).

    torchrun --nproc_per_node R bench/ddp_torch.py --arch 784-1024relu-1024relu-10 \
        --global-batch 4096 --steps 60 [--data DIR] [--json]

Same network (nn.Linear layers, ReLU, softmax cross-entropy), plain SGD (lr 0.01),
global batch split evenly over the R ranks (each rank global/R rows of the same
seeded permutation, ffnn's split), data resident on each GPU (Fashion-MNIST from
DIR when given, else random uint8 images with labels), NCCL backend, DDP's default
25 MB buckets overlapped with the backward pass. Times `--steps` steps after 10
warm-up steps on rank 0 (host clock after a synchronize; all ranks step in
lock-step) and prints
one JSON line: impl, arch, gpus, global_batch, ms_per_step, samples_per_s, loss.
TF32 is off (fp32, as ffnn's cublas fp32).
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from idx_files import find_idx, read_idx


def build(arch):
    parts = arch.split("-")
    width = int(parts[0])
    layers = []
    for p in parts[1:]:
        relu = p.endswith("relu")
        out = int(p[:-4] if relu else p)
        layers.append(nn.Linear(width, out))
        if relu:
            layers.append(nn.ReLU())
        width = out
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="784-256relu-10")
    ap.add_argument("--global-batch", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--data", default=None)
    ap.add_argument("--lr", type=float, default=0.01)
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cuda = torch.cuda.is_available()  # else gloo on the cpu: a smoke test of the script
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    if cuda:
        torch.cuda.set_device(local)
    dev = torch.device("cuda", local) if cuda else torch.device("cpu")
    torch.manual_seed(1)

    if args.data:
        x = torch.from_numpy(read_idx(find_idx(args.data, "train-images-idx3-ubyte")).copy()).reshape(-1, 784)
        y = torch.from_numpy(read_idx(find_idx(args.data, "train-labels-idx1-ubyte")).copy()).long()
    else:
        g = torch.Generator().manual_seed(1)
        x = torch.randint(0, 256, (60000, 784), generator=g, dtype=torch.uint8)
        y = torch.randint(0, 10, (60000,), generator=g)
    x, y = x.to(dev), y.to(dev)
    n = x.shape[0]
    model = build(args.arch).to(dev)
    ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    B = args.global_batch
    base, extra = divmod(B, world)
    first = rank * base + min(rank, extra)
    count = base + (1 if rank < extra else 0)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(1)).to(dev)
    steps_per_epoch = n // B

    def step(s):
        s %= steps_per_epoch
        idx = perm[s * B + first: s * B + first + count]
        xb = x.index_select(0, idx).float().div_(255.0)
        yb = y.index_select(0, idx)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(xb), yb)
        loss.backward()
        opt.step()
        return loss

    for s in range(10):
        step(s)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    dist.barrier()
    t0 = time.perf_counter()
    for s in range(args.steps):
        loss = step(10 + s)
    sync()
    ms = (time.perf_counter() - t0) * 1000.0 / args.steps
    if rank == 0:
        print(json.dumps({"impl": "torch_ddp", "arch": args.arch, "gpus": world,
                          "global_batch": B, "ms_per_step": round(ms, 4),
                          "samples_per_s": round(B / ms * 1000.0, 1),
                          "loss": round(float(loss), 5)}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
