#!/usr/bin/env python3
"""The stall reasons of an Nsight Compute SASS source page (ncu -i REP --page source
--csv --print-source sass > FILE): each reason's share of all warp samples, then the
hottest instructions. Usage: ncu_stalls.py FILE [REASONS [INSTRUCTIONS]]
(defaults 10 and 12). Used by bench/persistent_ncu.sh and bench/head_ncu.sh."""
import csv
import sys

path = sys.argv[1]
n_reasons = int(sys.argv[2]) if len(sys.argv) > 2 else 10
n_instr = int(sys.argv[3]) if len(sys.argv) > 3 else 12
rows = list(csv.reader(open(path)))
h, data = rows[1], rows[2:]
si = h.index("Warp Stall Sampling (All Samples)")
num = lambda v: int(v) if v.isdigit() else 0
cols = [i for i, c in enumerate(h) if c.startswith("stall_") and "Not Issued" not in c]
tot = sum(num(r[si]) for r in data)
agg = {h[c]: sum(num(r[c]) for r in data) for c in cols}
print("samples", tot, "instructions", len(data))
for k, v in sorted(agg.items(), key=lambda x: -x[1])[:n_reasons]:
    print("%-24s %5.1f%%" % (k, 100.0 * v / max(tot, 1)))
for r in sorted(data, key=lambda r: -num(r[si]))[:n_instr]:
    print("%7d  %s" % (num(r[si]), r[1].strip()[:60]))
