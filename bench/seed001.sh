#!/usr/bin/env bash
# Seed 001 in one device call: build for sm_90, run `ffnn bench seed001` (cuda naive
# and tiled on the GPU, the OpenMP runs on the device's CPU), plot. Usage on the
# device machine:
#   bash bench/seed001.sh [more options of ffnn bench seed001, e.g. --quick]
# Writes under $OUT (or ./device-out): seed001.csv, seed001_table.md, seed001.png,
# gpu.txt, build.log, bench.log. Copy the first three into docs/.
# Budget: build ~1 min, bench well under a minute (3 repeats of 8 configurations x 3
# backends, 100 epochs each), plot a few seconds: under 3 minutes of device time.
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
timeout 150 build/ffnn bench seed001 --out "$OUT" "$@" 2> "$OUT/bench.log"
rc=$?
[ $rc -eq 0 ] || { echo "ffnn bench seed001 exited with $rc; bench.log:"; tail -40 "$OUT/bench.log"; }

python3 bench/plot_seed001.py "$OUT/seed001.csv" "$OUT/seed001.png" || rc=1
echo "total: $(( $(date +%s) - T0 )) s, exit $rc"
exit $rc
