#!/usr/bin/env python3
"""PyTorch twin of `ffnn train` on a table with an embedded column: the same net
(torch.nn.Embedding for the column ffnn embeds, nn.Linear above), the same initial
weights (PyTorch's, handed to ffnn through a model file), the same batches (ffnn's
shuffle, re-implemented in torch_twin.py), Adam; compares every per-step loss
(1e-5 relative), the final weights (1e-4 relative, max norm) and `ffnn predict`'s
probabilities on raw rows, an unseen level among them (a zero vector in the twin).

The table (written here): x (a number), color (4 levels, one-hot: --max-one-hot 8),
city (60 levels, embedded with --embedding-dim city:6), label 0/1. ffnn's encoding
of a row (docs/TABLES.md): x, the one-hot of color (levels sorted), then city's code
(its index among the sorted levels); the net 6-embed60x6-16tanh-2.

usage: torch_embedding_twin.py --ffnn build/ffnn [--threads N] [--tmp DIR]
Exit status 0 when everything is within its tolerance.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_twin import (FFNN_STREAM_SHUFFLE, Xoshiro256, read_safetensors,  # noqa: E402
                        write_safetensors)

ARCH, SEED, LR, BATCH, EPOCHS = "6-embed60x6-16tanh-2", 5, 0.01, 32, 3
COLORS = ["red", "green", "blue", "grey"]
CITIES = ["city%02d" % i for i in range(60)]


def make_table(path, rows, rng):
    effect = rng.normal(0, 1.5, len(CITIES))
    data = []
    with open(path, "w") as f:
        f.write("x,color,city,label\n")
        for r in range(rows):
            c = CITIES[r % len(CITIES)] if r < len(CITIES) else CITIES[rng.integers(len(CITIES))]
            col = COLORS[rng.integers(len(COLORS))]
            x = float(np.float32(round(rng.uniform(-2, 2), 3)))
            label = int(effect[CITIES.index(c)] + x + (col == "red") + rng.normal(0, 0.5) > 0)
            f.write(f"{x:.3f},{col},{c},{label}\n")
            data.append((x, col, c, label))
    return data


def encode(rows):
    """ffnn's encoding: x, one-hot color, then city's code as a long."""
    colors, cities = sorted(COLORS), sorted(CITIES)
    dense = np.zeros((len(rows), 5), np.float32)
    codes = np.zeros(len(rows), np.int64)
    for i, (x, col, c, _) in enumerate(rows):
        dense[i, 0] = x
        dense[i, 1 + colors.index(col)] = 1.0
        codes[i] = cities.index(c) if c in cities else -1
    return torch.from_numpy(dense), torch.from_numpy(codes)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(60, 6)
        self.l1 = torch.nn.Linear(5 + 6, 16)
        self.l2 = torch.nn.Linear(16, 2)

    def forward(self, dense, codes):
        seen = codes >= 0  # an unseen level: a zero vector, as ffnn's layer
        e = self.emb(codes.clamp(min=0)) * seen.unsqueeze(1).float()
        return self.l2(torch.tanh(self.l1(torch.cat([dense, e], 1))))

    def ffnn_tensors(self):
        return {"layers.0.weight": self.emb.weight.reshape(-1),
                "layers.1.weight": self.l1.weight, "layers.1.bias": self.l1.bias,
                "layers.2.weight": self.l2.weight, "layers.2.bias": self.l2.bias}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ffnn", required=True)
    ap.add_argument("--threads", type=int, default=1,
                    help="1: ffnn's cpu reference backend (default); N > 1: OpenMP")
    ap.add_argument("--tmp")
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="ffnn-embedding-twin-")
    rng = np.random.default_rng(SEED)
    csv = os.path.join(tmp, "table.csv")
    rows = make_table(csv, 400, rng)
    torch.manual_seed(SEED)
    net = Net()
    init = os.path.join(tmp, "init.safetensors")
    write_safetensors(init, net.ffnn_tensors(),
                      {"arch": ARCH, "loss": "ce", "format": "ffnn-model"})
    steps, final = os.path.join(tmp, "steps.csv"), os.path.join(tmp, "final.safetensors")
    cmd = [args.ffnn, "train", "--data", csv, "--init", init, "--max-one-hot", "8",
           "--embedding-dim", "city:6", "--optimizer", "adam", "--lr", str(LR), "--batch",
           str(BATCH), "--epochs", str(EPOCHS), "--seed", str(SEED), "--device", "cpu",
           "--log-steps", steps, "--save", final, "--quiet"]
    cmd += ["--strategy", "reference"] if args.threads == 1 else ["--threads", str(args.threads)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or "embedded: city (60 levels, dim 6)" not in r.stdout:
        sys.exit(f"ffnn failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    with open(steps) as f:
        col = f.readline().strip().split(",").index("loss")
        ffnn_losses = [float(line.split(",")[col]) for line in f]

    dense, codes = encode(rows)
    y = torch.tensor([row[3] for row in rows])
    opt = torch.optim.Adam(net.parameters(), lr=LR)
    shuffle = Xoshiro256(SEED, FFNN_STREAM_SHUFFLE)
    losses = []
    for _ in range(EPOCHS):
        perm = list(range(len(rows)))
        shuffle.shuffle(perm)
        for first in range(0, len(rows), BATCH):
            idx = torch.tensor(perm[first:first + BATCH])
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(dense[idx], codes[idx]), y[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    if len(losses) != len(ffnn_losses):
        sys.exit(f"step counts differ: ffnn {len(ffnn_losses)}, torch {len(losses)}")
    rel = [abs(a - b) / abs(b) for a, b in zip(ffnn_losses, losses)]
    worst = max(range(len(rel)), key=rel.__getitem__)
    got, _ = read_safetensors(final)
    wrel = max((got[k].reshape(t.shape) - t.detach()).abs().max().item() /
               t.detach().abs().max().item() for k, t in net.ffnn_tensors().items())

    # raw rows to predict: a known city, an unseen one, a known one
    raw = [(0.5, "red", "city07", 0), (-0.25, "blue", "atlantis", 0), (1.0, "grey", "city59", 0)]
    pcsv = os.path.join(tmp, "predict.csv")
    with open(pcsv, "w") as f:
        f.write("x,color,city\n" + "".join(f"{x},{c},{t}\n" for x, c, t, _ in raw))
    p = subprocess.run([args.ffnn, "predict", "--model", final, "--data", pcsv],
                       capture_output=True, text=True)
    if p.returncode != 0 or "1 cell of a category the model was not trained on" not in p.stderr:
        sys.exit(f"ffnn predict failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    ffnn_prob = np.array([[float(v) for v in line.split(",")[1:]]
                          for line in p.stdout.strip().splitlines()[1:]])
    with torch.no_grad():
        d, c = encode(raw)
        torch_prob = torch.softmax(net(d, c), 1).numpy()
    perr = float(np.abs(ffnn_prob - torch_prob).max())

    backend = "cpu reference" if args.threads == 1 else f"cpu omp {args.threads} threads"
    print(f"embedding twin ({backend}): {len(rel)} steps, worst per-step loss difference "
          f"{rel[worst]:.2e} relative at step {worst + 1} (ffnn {ffnn_losses[worst]:.8f}, "
          f"torch {losses[worst]:.8f}); final weights {wrel:.2e} relative (max norm); "
          f"predict on raw rows (one unseen city) {perr:.2e} absolute; torch {torch.__version__}")
    ok = rel[worst] <= 1e-5 and wrel <= 1e-4 and perr <= 1e-5  # predict prints 6 digits
    if not ok:
        print("FAILED: tolerance 1e-5 for losses, 1e-4 for weights, 1e-5 for probabilities")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
