#!/usr/bin/env python3
"""Issue 10's open point: the cuBLAS rows of the before/after table scattered
0.67x-1.53x between two rounds. This re-measures only the cublas strategy
(fp32, tf32, bf16) of the seed-000 net at batch 1024 and 256 and the wide net,
before (.baseline/build/ffnn) and after (build/ffnn) interleaved, ROUNDS rounds,
each one process with one warm-up epoch and EPOCHS timed epochs. Prints, per
row, the median over all timed epochs and the spread of the per-round medians.
  python3 bench/cublas_before_after.py DATA_DIR [ROUNDS] [EPOCHS]"""
import json, statistics, subprocess, sys

data = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
bins = {"before": (".baseline/build/ffnn", "--kernels"), "after": ("build/ffnn", "--strategy")}
configs = [("784-256relu-10", 256), ("784-256relu-10", 1024), ("784-1024relu-1024relu-10", 1024)]
modes = ["cublas", "cublas:tf32", "cublas:bf16"]
res = {}
for rnd in range(rounds):
    for arch, batch in configs:
        for mode in modes:
            strategy, _, precision = mode.partition(":")
            order = ("before", "after") if rnd % 2 == 0 else ("after", "before")
            for who in order:
                exe, flag = bins[who]
                cmd = [exe, "train", "--data", data, "--arch", arch, "--batch", str(batch),
                       "--lr", "0.1", "--epochs", str(epochs + 1), "--device", "cuda", flag,
                       strategy, "--precision", precision or "fp32", "--json", "--seed", "1"]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    print(who, mode, arch, batch, r.stderr.strip(), file=sys.stderr)
                    continue
                rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
                ms = [1e3 * x["seconds"] for x in rows[1:]]
                res.setdefault((arch, batch, mode), {}).setdefault(who, []).append(ms)
print(f"{rounds} rounds x {epochs} timed epochs, interleaved (order alternates per round)")
print("| arch | batch | strategy | before ms/epoch (median; round medians min-max) "
      "| after ms/epoch (median; round medians min-max) | after/before |")
print("|---|---|---|---|---|---|")
for (arch, batch, mode), d in res.items():
    cells = []
    med = {}
    for who in ("before", "after"):
        runs = d.get(who, [])
        flat = [x for r in runs for x in r]
        rm = [statistics.median(r) for r in runs]
        med[who] = statistics.median(flat) if flat else float("nan")
        cells.append(f"{med[who]:.2f} ({min(rm):.2f}-{max(rm):.2f})" if rm else "-")
    print(f"| {arch} | {batch} | {mode} | {cells[0]} | {cells[1]} | "
          f"{med['after'] / med['before']:.3f} |")
