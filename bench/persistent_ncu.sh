#!/usr/bin/env bash
# Nsight Compute of the persistent kernel (784-256relu-10, batch 64, one launch: the
# epoch, 938 steps) on the device: the details page and the per-SASS-instruction
# stall samples (source_sass.csv). Usage: OUT=dir bash bench/persistent_ncu.sh
# Feeds docs/PERFORMANCE.md "Limits of the fastest versions" (the persistent kernel). Needs ncu, .devdata/fashion-mnist.
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-device-out}; mkdir -p "$OUT"
mkdir -p /usr/share/datasets
ln -sfn "$(realpath .devdata/fashion-mnist)" /usr/share/datasets/fashion-mnist
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
make -j16 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" build/ffnn \
    > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
NCU=$(command -v ncu ||
      ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
echo "ncu: $NCU"
timeout 400 $NCU -k regex:persistent_kernel -c 1 --set full --import-source yes -o $OUT/p64 \
  build/ffnn train --data /usr/share/datasets/fashion-mnist --arch 784-256relu-10 --batch 64 \
  --epochs 1 --lr 0.1 --strategy persistent > $OUT/ncu.log 2>&1
tail -5 $OUT/ncu.log
$NCU -i $OUT/p64.ncu-rep --page details --print-details all > $OUT/details.txt 2>&1
grep -E "Duration|Warp Cycles Per Issued|Stall|Issue Slot|Registers|Achieved Occupancy" \
    $OUT/details.txt | head -40
$NCU -i $OUT/p64.ncu-rep --page source --csv --print-source sass > $OUT/source_sass.csv 2>/dev/null
$NCU -i $OUT/p64.ncu-rep --page source --csv --print-source cuda > $OUT/source_cuda.csv 2>/dev/null
# the stall reasons' shares of all samples, and the 12 hottest instructions
python3 bench/ncu_stalls.py "$OUT/source_sass.csv" 10 12
