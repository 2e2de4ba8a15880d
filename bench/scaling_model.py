#!/usr/bin/env python3
"""The analytic scaling model of ffnn's synchronous data parallelism (docs/SCALING.md).

    python3 bench/scaling_model.py                 # the tables of docs/SCALING.md
    python3 bench/scaling_model.py --measured build/bench/scaling/scaling.csv
                                                   # model vs bench/scaling.sh's runs

One step on R GPUs = forward + backward of the rank's B/R rows, the gradient
all-reduce in 25 MB buckets (layer-granular, last layer first, each started when
its layers' backward is done, one communication stream), then the update. The
model's inputs (every number below is named in docs/SCALING.md with its source):

  compute  t(b) = T0 + b * c: T0 (launches, small kernels) and c (per row) fitted to
           the measured single-H200 cublas fp32 times of docs/PERFORMANCE.md; the
           backward pass is 2/3 of it, split over the layers by their FLOPs
  all-reduce (NCCL ring)  t = alpha + 2 (R - 1) / R * S / busbw
           one node: busbw = NVLink 450 GB/s per direction x 0.8 (what NCCL's
           all-reduce reaches on NVSwitch H100/H200 systems without NVLS);
           N nodes of 8: the inter-node ring is bound by the node's InfiniBand,
           400 Gb/s = 50 GB/s x 0.9, carrying 2 (N - 1) / N * S per node; the
           intra-node reduce-scatter/all-gather (over NVLink) is pipelined with it
  overlap  bucket k starts at max(its backward done, bucket k-1 done); the update
           waits for the last bucket
Efficiency: strong (global batch B fixed) t(B) / (R * step(R, B/R)); weak (per-GPU
batch b fixed) t(b) / step(R, b).
"""
import argparse
import csv
import math

NVLINK_GBS = 450.0          # per direction, H200 (NVLink 4, 18 links x 25 GB/s)
NVLINK_EFF = 0.80           # NCCL all-reduce bus bandwidth / link bandwidth (assumed)
IB_GBS = 400.0 / 8          # 400 Gb/s per node
IB_EFF = 0.90
ALPHA_NODE_US = 10.0        # one all-reduce's latency inside a node (NCCL LL, assumed)
ALPHA_HOP_US = 5.0          # per inter-node tree level (assumed)
BUCKET_BYTES = 25 << 20     # FFNN_BUCKET_BYTES
GPUS_PER_NODE = 8

# single-H200 fits (docs/PERFORMANCE.md, cublas fp32, Fashion-MNIST, ms/epoch / steps):
#   784-256-10: batch 256 14.88 ms / 235 steps = 63.3 us; batch 1024 5.91 ms / 59 = 100.2 us
T0_US = 63.3 - 256 * (100.2 - 63.3) / 768      # = 51.0 us per step
NETS = {
    # name: (layers [(in, out)], us per row of the measured/assumed rate)
    "784-256relu-10": ([(784, 256), (256, 10)], (100.2 - 63.3) / 768),
    # 784-1024-1024-10, batch 1024: 22.43 ms / 59 steps = 380 us per step
    "784-1024relu-1024relu-10": ([(784, 1024), (1024, 1024), (1024, 10)],
                                 (380.2 - 51.0) / 1024),
    # not measured yet: 220.8 MFLOP per row at an assumed 45 TFLOP/s (cuBLAS fp32 reaches
    # 99-102% of the 51 TFLOP/s ceiling on 4096^3 in the kernel lab; 90% of it for the step)
    "784-4096relu-4096relu-4096relu-10": ([(784, 4096), (4096, 4096), (4096, 4096), (4096, 10)],
                                          6 * (784 * 4096 + 2 * 4096 * 4096 + 4096 * 10) / 45e6),
}


def params(layers):
    return sum(i * o + o for i, o in layers)


def compute_us(net, rows):
    return T0_US + rows * NETS[net][1]


def allreduce_us(nbytes, R, nics_per_node=1):
    """NCCL ring all-reduce of nbytes over R GPUs (8 per node)."""
    if R <= 1:
        return 0.0
    if R <= GPUS_PER_NODE:
        bw = NVLINK_GBS * NVLINK_EFF * 1e3          # bytes per us
        return ALPHA_NODE_US + 2 * (R - 1) / R * nbytes / bw
    nodes = R // GPUS_PER_NODE
    intra = 2 * (GPUS_PER_NODE - 1) / GPUS_PER_NODE * nbytes / (NVLINK_GBS * NVLINK_EFF * 1e3)
    inter = 2 * (nodes - 1) / nodes * nbytes / (IB_GBS * nics_per_node * IB_EFF * 1e3)
    return ALPHA_NODE_US + ALPHA_HOP_US * 2 * math.log2(nodes) + max(intra, inter)


def buckets(layers):
    """[(bytes, index of the layer whose backward completes the bucket)], in order."""
    out, pending = [], 0
    for i in range(len(layers) - 1, -1, -1):
        pending += 4 * (layers[i][0] * layers[i][1] + layers[i][1])
        if pending >= BUCKET_BYTES or i == 0:
            out.append((pending, i))
            pending = 0
    return out


def step_us(net, rows, R, nics_per_node=1):
    """(step time, compute time, all-reduce busy time, not overlapped) on R GPUs, rows each."""
    layers = NETS[net][0]
    t = compute_us(net, rows)
    if R <= 1:
        return t, t, 0.0, 0.0
    fwd = t / 3.0
    flops = [i * o for i, o in layers]
    bwd_done, clock = {}, fwd        # the backward pass, last layer first
    for i in range(len(layers) - 1, -1, -1):
        clock += (2 * t / 3.0) * flops[i] / sum(flops)
        bwd_done[i] = clock
    comm_end, busy = 0.0, 0.0
    for nbytes, i in buckets(layers):
        d = allreduce_us(nbytes, R, nics_per_node)
        comm_end = max(bwd_done[i], comm_end) + d
        busy += d
    end = max(clock, comm_end)
    return end, t, busy, end - clock


def efficiency(net, B, R, mode, nics_per_node=1):
    if mode == "strong":
        rows = max(1, math.ceil(B / R))
        return compute_us(net, B) / (R * step_us(net, rows, R, nics_per_node)[0])
    return compute_us(net, B) / step_us(net, B, R, nics_per_node)[0]  # B per GPU


def tables():
    print("Gradient sizes and buckets (25 MB, layer-granular):\n")
    print("| net | parameters | gradient MB | buckets (MB, in reduction order) |")
    print("|---|---|---|---|")
    for net, (layers, _) in NETS.items():
        b = ", ".join(f"{nb / 1e6:.1f}" for nb, _ in buckets(layers))
        print(f"| {net} | {params(layers):,} | {4 * params(layers) / 1e6:.2f} | {b} |")
    print("\nAll-reduce of the whole gradient (µs; one bucket's cost at these sizes):\n")
    print("| net | 2 GPUs | 4 | 8 | 2 nodes (16) | 4 (32) | 8 (64) | 16 (128) |")
    print("|---|---|---|---|---|---|---|---|")
    for net, (layers, _) in NETS.items():
        S = 4 * params(layers)
        print(f"| {net} | " + " | ".join(f"{allreduce_us(S, R):.0f}"
                                         for R in (2, 4, 8, 16, 32, 64, 128)) + " |")
    Rs = (2, 4, 8, 16, 32, 64, 128)
    for mode in ("strong", "weak"):
        print(f"\n{mode.capitalize()} scaling efficiency "
              f"({'global batch fixed' if mode == 'strong' else 'batch per GPU fixed'}; "
              "8 GPUs per node, one 400 Gb/s link per node):\n")
        print(f"| net | {'global' if mode == 'strong' else 'per-GPU'} batch | one GPU µs/step | "
              + " | ".join(f"{R} GPUs" if R <= 8 else f"{R // 8} nodes" for R in Rs) + " |")
        print("|---|---|---|" + "---|" * len(Rs))
        for net in NETS:
            batches = (1024, 4096, 16384) if net.startswith("784-256") else (4096, 16384, 65536)
            for B in batches:
                cells = " | ".join(f"{efficiency(net, B, R, mode):.2f}" for R in Rs)
                print(f"| {net} | {B} | {compute_us(net, B):.0f} | {cells} |")
    print("\nWith one 400 Gb/s link per GPU (8 per node, as a DGX H200) instead, "
          "strong scaling at the largest batch:\n")
    print("| net | global batch | " + " | ".join(f"{R // 8} nodes" for R in Rs[3:]) + " |")
    print("|---|---|" + "---|" * len(Rs[3:]))
    for net in NETS:
        B = 16384 if net.startswith("784-256") else 65536
        print(f"| {net} | {B} | " + " | ".join(f"{efficiency(net, B, R, 'strong', 8):.2f}"
                                                for R in Rs[3:]) + " |")
    print("\nOne step in detail (µs): compute of the rank's rows, all-reduce busy time, "
          "not overlapped, step; strong scaling:\n")
    print("| net | global batch | GPUs | compute | all-reduce | not overlapped | step | efficiency |")
    print("|---|---|---|---|---|---|---|---|")
    for net, B in (("784-256relu-10", 4096), ("784-1024relu-1024relu-10", 16384),
                   ("784-4096relu-4096relu-4096relu-10", 16384)):
        for R in (2, 8, 64):
            s, c, busy, exposed = step_us(net, math.ceil(B / R), R)
            print(f"| {net} | {B} | {R} | {c:.0f} | {busy:.0f} | {exposed:.0f} | {s:.0f} | "
                  f"{efficiency(net, B, R, 'strong'):.2f} |")


def measured(path):
    rows = list(csv.DictReader(open(path)))
    ips = {(r["impl"], r["arch"], int(r["global_batch"]), int(r["gpus"])): r["images_per_s"]
           for r in rows}
    print("| impl | arch | mode | GPUs | global batch | measured efficiency | model |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if r["mode"] not in ("strong", "weak") or r["arch"] not in NETS:
            continue
        R, B = int(r["gpus"]), int(r["global_batch"])
        if R == 1:
            continue
        base_b = B if r["mode"] == "strong" else B // R
        try:
            v = float(r["images_per_s"])
            base = float(ips[(r["impl"], r["arch"], base_b, 1)])
            meas = f"{v / (R * base):.2f}"
        except (KeyError, ValueError, ZeroDivisionError):
            meas = "-"
        model = efficiency(r["arch"], B if r["mode"] == "strong" else B // R, R, r["mode"])
        print(f"| {r['impl']} | {r['arch']} | {r['mode']} | {R} | {B} | {meas} | {model:.2f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--measured", help="scaling.csv of bench/scaling.sh")
    a = ap.parse_args()
    measured(a.measured) if a.measured else tables()
