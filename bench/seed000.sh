#!/usr/bin/env bash
# Seed 000 in one device call: build for sm_90, run `ffnn bench seed000` on the
# device's Fashion-MNIST (it has no MNIST), plot. Usage on the
# device machine:
#   bash bench/seed000.sh [more options of ffnn bench seed000, e.g. --quick]
# Writes under $OUT (or ./device-out): seed000.csv, seed000_table.md, seed000.png,
# gpu.txt, build.log, bench.log. Copy the first three into docs/.
# Budget: build ~1 min; bench ~1.5 min (CPU reference 1 epoch ~20 s, OpenMP 10 epochs,
# ~20 GPU configurations x 3 repeats of 5-10 epochs); under 4 minutes of device time.
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
timeout 180 build/ffnn bench seed000 --data .devdata/fashion-mnist --out "$OUT" "$@" 2> "$OUT/bench.log"
rc=$?
[ $rc -eq 0 ] || { echo "ffnn bench seed000 exited with $rc; bench.log:"; tail -40 "$OUT/bench.log"; }

python3 bench/plot_seed000.py "$OUT/seed000.csv" "$OUT/seed000.png" || rc=1
echo "total: $(( $(date +%s) - T0 )) s, exit $rc"
exit $rc
