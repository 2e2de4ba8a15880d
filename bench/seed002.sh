#!/usr/bin/env bash
# Seed 002 in one device call: build for sm_90, run `ffnn bench seed002` (GPU part on
# the GPU, OpenMP part on the device's CPU), plot. Usage on the device machine:
#   bash bench/seed002.sh [more options of ffnn bench seed002, e.g. --quick]
# Writes under $OUT (or ./device-out): seed002.csv, seed002_table.md, seed002.png,
# gpu.txt, build.log, bench.log. Copy the first three into docs/.
# Budget: build ~1 min, bench <= MAXS seconds (default 200: no configuration starts
# after that), plot a few seconds: under 5 minutes of device time.
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
build/ffnn bench seed002 --out "$OUT" --max-seconds "${MAXS:-200}" "$@" 2> "$OUT/bench.log"
rc=$?
[ $rc -eq 0 ] || { echo "ffnn bench seed002 exited with $rc; bench.log:"; tail -40 "$OUT/bench.log"; }

python3 bench/plot_seed002.py "$OUT/seed002.csv" "$OUT/seed002.png" || rc=1
echo "total: $(( $(date +%s) - T0 )) s, exit $rc"
exit $rc
