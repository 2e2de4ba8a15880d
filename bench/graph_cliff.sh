#!/usr/bin/env bash
# The graph cache with more launches per epoch than its 128 slots, one device call
# (after a build of build/ffnn for the GPU):
#   bash bench/graph_cliff.sh [ROWS]     (default 262144 rows: 4096 steps at batch 64)
# A synthetic 64-feature, 10-class set of ROWS rows (numpy, written under $OUT);
# graph at batch 64 and cublaslt at batch 128 with the old default steps per launch
# given explicitly (16 / 8: more launches than slots, so the LRU cache recaptures
# every launch) against today's default (raised so an epoch needs <= 128 launches).
# Median ms/epoch of epochs 2-4 per run.
set -uo pipefail
ROWS=${1:-262144}
OUT=${OUT:-cliff-out}; mkdir -p "$OUT"
F=${FFNN:-build/ffnn}; PY=${PYTHON:-python3}
$PY - "$OUT/cliff.npz" "$ROWS" <<'PY'
import sys, numpy as np
r = np.random.default_rng(7); n = int(sys.argv[2])
x = r.standard_normal((n, 64), dtype=np.float32)
y = (np.abs(x[:, :10]).argmax(1)).astype(np.int32)
np.savez(sys.argv[1], x=x, y=y)
PY
ms() { # median of epochs 2.. of a --json run, ms
    $PY -c 'import json,sys; s=sorted(json.loads(l)["seconds"] for l in sys.stdin.read().splitlines()[1:]); print("%.1f" % (1e3*s[len(s)//2]))'
}
for cfg in "graph 64 16" "cublaslt 128 8"; do
    set -- $cfg
    for spl in "$3" default; do
        a=(--data "$OUT/cliff.npz" --arch 64-256relu-10 --batch "$2" --epochs 4 --device cuda
           --strategy "$1" --test-split 0.01 --json)
        [ "$spl" = default ] || a+=(--steps-per-launch "$spl")
        t=$("$F" train "${a[@]}" 2> "$OUT/$1_$spl.err" | ms)
        echo "$1 batch $2, $ROWS rows ($(( ROWS / $2 )) steps/epoch), steps per launch $spl: $t ms/epoch"
    done
done
