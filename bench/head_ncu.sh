#!/usr/bin/env bash
# Nsight Compute --set full of the wide head's tensor-core kernels (head_logits_mma,
# head_slices_mma; 784-1024relu-1024relu-10 at batch 1024, tf32 and bf16) on the device:
# duration, issue, occupancy, the stall shares of the SASS samples. Usage: OUT=dir bash bench/head_ncu.sh
# Feeds docs/PERFORMANCE.md "Limits of the fastest versions" (the wide head). Needs ncu, .devdata/fashion-mnist.
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin"
OUT=${OUT:-device-out}; mkdir -p "$OUT"
mkdir -p /usr/share/datasets
ln -sfn "$(realpath .devdata/fashion-mnist)" /usr/share/datasets/fashion-mnist
D=/usr/share/datasets/fashion-mnist
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
[ -n "$CJSON" ] && export LD_LIBRARY_PATH="$PWD/.devdata/cjson/lib:${LD_LIBRARY_PATH:-}"
make -j14 $CJSON CUDA_ARCH="-gencode arch=compute_90,code=sm_90" build/ffnn \
    > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
for p in tf32 bf16; do for k in logits slices; do
  echo "=== $p $k"
  timeout 120 $NCU -k regex:head_${k}_mma --launch-skip 20 -c 1 --set full --cache-control none --clock-control none --import-source yes -o $OUT/$p$k \
    build/ffnn train --data $D --arch 784-1024relu-1024relu-10 --batch 1024 --epochs 1 --device cuda --strategy cublaslt --precision $p --steps-per-launch 1 > $OUT/ncu_$p$k.log 2>&1
  $NCU -i $OUT/$p$k.ncu-rep --page details --print-details all > $OUT/details_$p$k.txt 2>&1
  grep -E "^    Duration|Warp Cycles Per Issued|Issue Slots Busy|Registers Per|Achieved Occupancy|L2 Hit Rate|Memory Throughput|Executed Ipc A|Block Limit Reg" $OUT/details_$p$k.txt | head -14
  $NCU -i $OUT/$p$k.ncu-rep --page source --csv --print-source sass > $OUT/sass_$p$k.csv 2>/dev/null
  python3 bench/ncu_stalls.py "$OUT/sass_$p$k.csv" 7 6
done; done
