#!/usr/bin/env bash
# wait_policy.sh [FFNN [EPOCHS [BUSY]]] - the main job (ffnn train: 784-256relu-10,
# batch 64, the default data) under OpenMP waiting policies, on an idle machine and
# beside BUSY (default 2) busy processes (`yes > /dev/null`): seconds per epoch (median
# of the EPOCHS epochs of one run, default 2) for each policy, with the load average.
#   GOMP_SPINCOUNT=300000    libgomp's default when OMP_WAIT_POLICY is unset
#   OMP_WAIT_POLICY=passive  sleep at once
#   GOMP_SPINCOUNT=N         spin N times, then sleep (the ffnn program set 3000 until
#                            its threads became the library's pool)
# Prints a markdown table. docs/PERFORMANCE.md "Waiting policy" has the numbers of the
# 2-core machine from when the policy mattered; with no OpenMP region left in ffnn, every
# policy should now give the same times.
set -euo pipefail
ffnn=${1:-build/ffnn}
epochs=${2:-2}
busy=${3:-2}
# POLICIES="A B ..." and MODES="idle busy" override what is measured
read -r -a policies <<< "${POLICIES:-GOMP_SPINCOUNT=300000 OMP_WAIT_POLICY=passive GOMP_SPINCOUNT=1000 GOMP_SPINCOUNT=10000 GOMP_SPINCOUNT=30000}"
pids=()
stop_busy() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); }
trap stop_busy EXIT INT TERM

# median seconds per epoch of one run under env setting $1
run() {
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$1" "$ffnn" train --device cpu \
        --epochs "$epochs" --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys,statistics
print("%.2f" % statistics.median(json.loads(l)["seconds"] for l in sys.stdin if l.strip()))'
}

echo "| machine | policy | s/epoch | load average (1 min) |"
echo "|---|---|---|---|"
for mode in ${MODES:-idle busy}; do
    if [ "$mode" = busy ]; then
        for _ in $(seq "$busy"); do yes > /dev/null & pids+=($!); done
        sleep 2
    fi
    for p in "${policies[@]}"; do
        s=$(run "$p")
        echo "| $mode$([ "$mode" = busy ] && echo " ($busy x yes)") | \`$p\` | $s | $(cut -d' ' -f1 /proc/loadavg) |"
    done
    stop_busy
done
