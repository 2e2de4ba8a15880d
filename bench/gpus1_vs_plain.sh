#!/usr/bin/env bash
# Data parallelism on ONE GPU, one device call:
#   bash bench/gpus1_vs_plain.sh DATA_DIR        (DATA_DIR: Fashion-MNIST IDX files)
# 1. builds for sm_90 with NCCL (from /usr/local/cuda; MPI too when the device has mpicc)
#    and runs the tests of tests/test_parallel.c (ffnn_tests parallel): a group of one
#    GPU (ncclCommInitAll) against the plain trainer, bit for bit (per-step losses and
#    final parameters) for tiled, cublas, fused and graph with sgd and adam;
# 2. the CLI, per strategy: `ffnn train --gpus 1` against the plain run, --log-steps
#    compared byte for byte (the reduction of one rank is the identity);
# 3. the MPI launch of one rank (mpirun -np 1 ffnn train --device cuda) the same way,
#    when mpirun is installed on the device (else reported as skipped);
# 4. the cost of the NCCL path at world size 1 (ms/epoch, plain vs --gpus 1) and the
#    all-reduce time per step (--comm-timing, tiled).
# Feeds docs/RESULTS.md "Data parallelism" (the --gpus 1 and mpirun -np 1 row).
# Writes logs under $OUT (default dp-out); prints a summary at the end.
set -uo pipefail
DATA=${1:?usage: gpus1_vs_plain.sh DATA_DIR}
OUT=${OUT:-dp-out}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j16 BUILD=build-dp $CJSON NCCL=1 CUDA_ARCH="-gencode arch=compute_90,code=sm_90" \
    all build-dp/ffnn_tests > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
grep -m1 "ffnn build" "$OUT/build.log" | tee -a "$summary"
F=build-dp/ffnn

# 1. the tests
FFNN_BIN=$F build-dp/ffnn_tests parallel 2>&1 | tee "$OUT/tests.log"
say "tests: $(tail -1 "$OUT/tests.log")"

# 2. --gpus 1 against the plain run, byte for byte
common="--data $DATA --train-limit 12800 --epochs 2 --device cuda --json"
for s in tiled fused graph cublas cublaslt; do
    for opt in sgd adam; do
        lr=0.05; [ $opt = adam ] && lr=0.001
        args="$common --strategy $s --optimizer $opt --lr $lr --batch 64"
        $F train $args --log-steps "$OUT/plain_${s}_$opt.csv" > "$OUT/plain_${s}_$opt.json" 2>&1
        $F train $args --gpus 1 --log-steps "$OUT/gpus1_${s}_$opt.csv" > "$OUT/gpus1_${s}_$opt.json" 2>&1
        if cmp -s "$OUT/plain_${s}_$opt.csv" "$OUT/gpus1_${s}_$opt.csv" &&
           [ "$(wc -l < "$OUT/plain_${s}_$opt.csv")" -gt 100 ]; then
            say "--gpus 1 vs plain, $s $opt: $(($(wc -l < "$OUT/plain_${s}_$opt.csv") - 1)) steps bit for bit"
        else
            say "--gpus 1 vs plain, $s $opt: DIFFERENT (see $OUT/*_${s}_$opt.*)"
        fi
    done
done

# 3. the MPI launch of one rank
if command -v mpirun >/dev/null 2>&1 && grep -q ", MPI," "$OUT/build.log"; then
    for s in tiled graph; do
        args="$common --strategy $s --lr 0.05 --batch 64"
        mpirun --allow-run-as-root -np 1 $F train $args --log-steps "$OUT/mpi1_$s.csv" \
            > "$OUT/mpi1_$s.json" 2>&1
        if cmp -s "$OUT/plain_${s}_sgd.csv" "$OUT/mpi1_$s.csv"; then
            say "mpirun -np 1 vs plain, $s sgd: bit for bit"
        else
            say "mpirun -np 1 vs plain, $s sgd: DIFFERENT (see $OUT/mpi1_$s.*)"
        fi
    done
else
    say "mpirun -np 1: skipped (no mpirun on the device, or the build found no MPI)"
fi

# 4. the cost at world size 1: ms/epoch (median of 3 epochs after one) and --comm-timing
ms() { # the median epoch seconds after the first, in ms
    grep '"epoch"' "$1" | sed 's/.*"seconds": \([0-9.e-]*\).*/\1/' | tail -n +2 | sort -g |
        awk '{a[NR] = $1} END {printf "%.3f", 1000 * a[int((NR + 1) / 2)]}'
}
for cfg in "784-256relu-10 1024 cublas" "784-256relu-10 64 graph" "784-1024relu-1024relu-10 1024 cublas"; do
    set -- $cfg
    args="--data $DATA --arch $1 --batch $2 --strategy $3 --epochs 4 --device cuda --json"
    $F train $args > "$OUT/time_plain_$1_$2.json" 2>&1
    $F train $args --gpus 1 > "$OUT/time_gpus1_$1_$2.json" 2>&1
    say "ms/epoch $1 batch $2 $3: plain $(ms "$OUT/time_plain_$1_$2.json"), --gpus 1 $(ms "$OUT/time_gpus1_$1_$2.json")"
done
$F train --data "$DATA" --arch 784-1024relu-1024relu-10 --batch 1024 --strategy tiled \
    --epochs 1 --device cuda --gpus 1 --comm-timing > "$OUT/comm_timing.txt" 2>&1
say "$(grep -m1 all-reduce "$OUT/comm_timing.txt")"
echo
cat "$summary"
