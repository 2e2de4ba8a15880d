#!/usr/bin/env bash
# Where one training step's time goes, kernel by kernel (Nsight Compute, durations
# only, --clock-control none), for each "ARCH BATCH STRATEGY PRECISION" of CONFIGS:
# LAUNCHES kernel launches after SKIP (inside the first epoch, after warm-up),
# --steps-per-launch 1 for the graph strategies (ncu profiles graph nodes one by
# one). CACHE=none keeps the caches warm between kernels, as in the real step (the
# default, all, flushes them before each kernel). Writes $OUT/prof_N.csv and prints per config: each kernel's name and
# duration in launch order, and the sum. Needs build/ffnn (sm_90) and ncu.
#   CONFIGS="784-128relux8-10 1024 fused fp32,..." bash bench/step_profile.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: step_profile.sh DATA_DIR}
OUT=${OUT:-build/bench/profile}; mkdir -p "$OUT"
SKIP=${SKIP:-400}; LAUNCHES=${LAUNCHES:-80}
CONFIGS=${CONFIGS:-"784-128relux8-10 1024 fused fp32"}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
[ -n "$NCU" ] || { echo "step_profile: no ncu"; exit 1; }
IFS=, read -ra CONFIG_LIST <<< "$CONFIGS"
k=0
for c in "${CONFIG_LIST[@]}"; do
    set -- $c; k=$((k + 1))
    echo "### $c (launches $SKIP..$((SKIP + LAUNCHES - 1)))"
    "$NCU" --clock-control none --cache-control "${CACHE:-all}" --metrics gpu__time_duration.sum --csv --launch-skip "$SKIP" \
        --launch-count "$LAUNCHES" build/ffnn train --data "$DATA" --arch "$1" --batch "$2" \
        --epochs 1 --device cuda --strategy "$3" --precision "$4" --steps-per-launch 1 \
        > "$OUT/prof_$k.csv" 2> "$OUT/prof_$k.err" || { echo "ncu failed:"; tail -5 "$OUT/prof_$k.err"; continue; }
    python3 - "$OUT/prof_$k.csv" << 'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, rows = rows[0], rows[1:]
k, u, v = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
tot = 0.0
for r in rows:
    t = float(r[v].replace(",", "")) * scale.get(r[u], float("nan"))
    tot += t
    print(f"{t:8.2f} us  {r[k][:110]}")
print(f"sum of these {len(rows)}: {tot:.1f} us")
PY
done
