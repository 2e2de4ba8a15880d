#!/usr/bin/env bash
# pool_wait.sh OLD_FFNN NEW_FFNN [BUSY [RUNS]] - seconds of one epoch of the main job
# (ffnn train --device cpu --epochs 1: 784-256relu-10, batch 64, the default data) of
# two builds, idle and beside BUSY (default 2) `yes > /dev/null`, RUNS (default 2) runs
# each: with GOMP_SPINCOUNT=300000 (libgomp's default when nothing is set: what a C
# program linking the library gets) and with nothing set (an ffnn program from before
# the CSV reader's pool then sets GOMP_SPINCOUNT=3000 itself; a newer one sets nothing).
# Prints a markdown table.
# docs/PERFORMANCE.md "Waiting policy" has the numbers of the 2-core machine.
set -euo pipefail
old=$1 new=$2 busy=${3:-2} runs=${4:-2}
pids=()
stop_busy() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; pids=(); }
trap stop_busy EXIT INT TERM
run() { # $1 binary, $2.. env settings
    local bin=$1; shift
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$@" timeout 300 "$bin" train --device cpu \
        --epochs 1 --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys
print(" ".join("%.2f" % json.loads(l)["seconds"] for l in sys.stdin if l.strip()) or "timeout")'
}
echo "| machine | build | s/epoch (runs) | load average (1 min) |"
echo "|---|---|---|---|"
for mode in idle busy; do
    if [ "$mode" = busy ]; then
        for _ in $(seq "$busy"); do yes > /dev/null & pids+=($!); done
        sleep 2
    fi
    for case in "old GOMP_SPINCOUNT=300000" "old" "new GOMP_SPINCOUNT=300000" "new"; do
        read -r which setting <<< "$case"
        bin=$old; [ "$which" = new ] && bin=$new
        s=""
        for _ in $(seq "$runs"); do s="$s $(run "$bin" ${setting:+"$setting"})"; done
        label="$which (${setting:-nothing set})"
        echo "| $mode$([ "$mode" = busy ] && echo " ($busy x yes)") | $label |$s | $(cut -d' ' -f1 /proc/loadavg) |"
    done
    stop_busy
done
