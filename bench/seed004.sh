#!/usr/bin/env bash
# Seed 004 in one device call: build for sm_90, run `ffnn bench seed004` (training on
# cuda and on the device CPU (OpenMP), per-op step times, reduction lab), plot. On the
# device machine:
#   bash bench/seed004.sh [more options of ffnn bench seed004, e.g. --quick]
# Writes under $OUT (or ./device-out): seed004.csv, seed004_table.md, seed004.png,
# gpu.txt, build.log, bench.log. Copy the first three into docs/.
# Budget: build ~1 min, bench ~1.5 min (the batch-2 Fashion-MNIST runs dominate:
# 120k steps each on cuda and OpenMP), plot seconds: under 3 minutes of device time.
set -uo pipefail
OUT=${OUT:-device-out}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
T0=$(date +%s)

nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.max.sm \
    --format=csv | tee "$OUT/gpu.txt"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket' |
    tee -a "$OUT/gpu.txt"
# the device has no libcjson-dev: carry .devdata/cjson (see bench/device_run.sh)
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" all \
    > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - T0 )) s"

# progress lines (stderr) go to bench.log; the table (stdout) is printed last
timeout 170 build/ffnn bench seed004 --out "$OUT" --data .devdata/fashion-mnist "$@" 2> "$OUT/bench.log"
rc=$?
[ $rc -eq 0 ] || { echo "ffnn bench seed004 exited with $rc; bench.log:"; tail -40 "$OUT/bench.log"; }

python3 bench/plot_seed004.py "$OUT/seed004.csv" "$OUT/seed004.png" || rc=1
echo "total: $(( $(date +%s) - T0 )) s, exit $rc"
exit $rc
