#!/usr/bin/env bash
# Issue 15, mixed precision (--precision bf16 on cublaslt: src/strategy/step.h
# ffnn_mixed), before and after in the same device call. Parts, in order:
#   build  this tree (all + build/ffnn_tests) and BASE's build/ffnn, side by side
#   tests  build/ffnn_tests $TESTS
#   time   ffnn train, BASE and this tree interleaved: 784-4096relux3-10 at batch
#          4096 (cublaslt fp32, tf32, bf16, cublas bf16; 4 epochs) and 784-256relu-10,
#          784-1024relux2-10 at batch 1024 in bf16 (cublaslt, cublas; 6 epochs),
#          each twice (TIME_CONFIGS: "NET BATCH EPOCHS STRATEGY PRECISION,..." instead);
#          ms/epoch = median over epochs 2.. of 60000 / (img/s)
#   prof   ncu: the duration of each kernel of one step (28 launches after 52) of the
#          4096-wide net in bf16, --steps-per-launch 1 (no graph)
#   acc    Fashion-MNIST test accuracy after 10 epochs, fp32 vs bf16 (cublaslt),
#          seeds 1-3, 784-256relu-10 and 784-1024relu-1024relu-10 at batch 1024, lr 0.1
#   torch  bench/vs_torch.py, torch.compile + CUDA graph + bf16 autocast beside
#          cublaslt:bf16, one process per config (TORCH_CONFIGS), 5 epochs
# usage: PART="build tests time prof acc torch" BASE=../15b-base bash bench/mixed_device.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: mixed_device.sh DATA_DIR}
OUT=${OUT:-mixed-out}; mkdir -p "$OUT"
PART=${PART:-build tests time}; BASE=${BASE:-}
TESTS=${TESTS:-cublaslt}
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$(realpath "$DATA/../cjson")"
ARCH="CUDA_ARCH=-gencode arch=compute_90,code=sm_90"
has() { case " $PART " in *" $1 "*) return 0;; esac; return 1; }
if has build; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
    [ -n "$BASE" ] && { make -C "$BASE" -j6 $CJSON "$ARCH" build/ffnn > "$OUT/build_base.log" 2>&1 & }
    make -j10 $CJSON "$ARCH" all build/ffnn_tests > "$OUT/build.log" 2>&1 ||
        { tail -30 "$OUT/build.log"; exit 1; }
    wait || { tail -30 "$OUT/build_base.log"; exit 1; }
    echo "built $(date +%T)"
fi
if has tests; then
    FFNN_BIN=build/ffnn FFNN_CLI=build/ffnn build/ffnn_tests $TESTS 2>&1 | tee "$OUT/tests.log" | grep -v "^  *ok\|^ok" | tail -40
fi
# ms/epoch of one run: median over epochs 2.. of 60000 / img/s
ms() {
    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "img/s") v = $(i - 1); n++;
                    if (n > 1) printf "%.2f\n", 6e7 / v }' | sort -n |
        awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
run() { # BIN ARCH BATCH EPOCHS STRATEGY PRECISION
    "$1" train --data "$DATA" --arch "$2" --batch "$3" --epochs "$4" --device cuda \
        --strategy "$5" --precision "$6" 2> /dev/null | tee -a "$OUT/train_runs.log" | ms
}
if has time; then
    echo "| net, batch | strategy:precision | round | main (ms/epoch) | this tree (ms/epoch) |" | tee "$OUT/time.md"
    echo "|---|---|---|---|---|" | tee -a "$OUT/time.md"
    W=784-4096relu-4096relu-4096relu-10
    CONFIGS=${TIME_CONFIGS:-"$W 4096 4 cublaslt bf16,$W 4096 4 cublas bf16,$W 4096 4 cublaslt tf32,$W 4096 4 cublaslt fp32,784-256relu-10 1024 6 cublaslt bf16,784-256relu-10 1024 6 cublas bf16,784-1024relu-1024relu-10 1024 6 cublaslt bf16,784-1024relu-1024relu-10 1024 6 cublas bf16"}
    IFS=, read -ra CONFIG_LIST <<< "$CONFIGS"
    for c in "${CONFIG_LIST[@]}"; do
        set -- $c
        for round in 1 2; do
            b=-; [ -n "$BASE" ] && b=$(run "$BASE/build/ffnn" $1 $2 $3 $4 $5)
            n=$(run build/ffnn $1 $2 $3 $4 $5)
            echo "| $1, $2 | $4:$5 | $round | $b | $n |" | tee -a "$OUT/time.md"
            [ "$1" = $W ] && [ "$4:$5" != cublaslt:bf16 ] && break
        done
    done
fi
if has prof; then # one step's kernels of the 4096-wide net in bf16 (ncu: durations only)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
    if [ -n "$NCU" ]; then
        "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 52 \
            --launch-count 28 build/ffnn train --data "$DATA" --arch 784-4096relu-4096relu-4096relu-10 \
            --batch 4096 --epochs 1 --device cuda --strategy cublaslt --precision bf16 \
            --steps-per-launch 1 > "$OUT/ncu.csv" 2> "$OUT/ncu.err"
        python3 - "$OUT/ncu.csv" << 'PY' | tee "$OUT/prof.md"
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, rows = rows[0], rows[1:]
k, u, v = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
tot = 0.0
for r in rows:
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    t = float(r[v].replace(",", "")) * scale.get(r[u], float("nan"))
    tot += t
    print(f"| {r[k][:90]} | {t:.1f} us |")
print(f"| total of these {len(rows)} | {tot:.1f} us |")
PY
    else
        echo "no ncu"
    fi
fi
if has acc; then
    echo "| net | seed | fp32 test acc | bf16 test acc |" | tee "$OUT/acc.md"
    echo "|---|---|---|---|" | tee -a "$OUT/acc.md"
    for net in 784-256relu-10 784-1024relu-1024relu-10; do
        for seed in 1 2 3; do
            a=(); for p in fp32 bf16; do
                a+=("$(build/ffnn train --data "$DATA" --arch $net --batch 1024 --epochs 10 --lr 0.1 \
                    --device cuda --strategy cublaslt --precision $p --seed $seed 2> /dev/null |
                    awk '/^epoch/ { for (i = 1; i <= NF; i++) if ($i == "test_acc") v = $(i + 1) } END { print v }')")
            done
            echo "| $net | $seed | ${a[0]} | ${a[1]} |" | tee -a "$OUT/acc.md"
        done
    done
fi
if has torch; then # vs_torch.py rows: torch.compile + graph + bf16 autocast beside cublaslt:bf16
    k=0
    for c in ${TORCH_CONFIGS:-784-4096relux3-10:4096 784-1024relu-1024relu-10:1024 784-256relu-10:1024}; do
        k=$((k + 1))
        python3 bench/vs_torch.py "$DATA" --ffnn build/ffnn --strategy cublaslt:bf16 \
            --torch-modes compile_graph:bf16 --epochs 5 --configs "$c" \
            --out "$OUT/vs_torch_$k.json" 2> "$OUT/vs_torch_$k.err" | tee "$OUT/vs_torch_$k.md"
    done
fi
