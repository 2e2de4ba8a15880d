#!/usr/bin/env bash
# Data-parallel scaling on 2 and 4 GPUs of one node (ready to run; not yet run on the
# device). One device call on nvidia-h200-x4 (or -x2: GPUS="1 2"):
#   bash bench/scaling.sh DATA_DIR          (DATA_DIR: Fashion-MNIST IDX files)
# 1. parity: 200 steps, sgd and adam, --gpus R and mpirun -np R (when mpirun exists)
#    against one GPU: per-step losses within 1e-4 of the loss scale (tests/test_parallel.sh's
#    measure), ranks' losses identical (they are reduced);
# 2. throughput (cublas fp32, images/s from the epoch lines, median after a warm-up
#    epoch): the seed-000 net at global batch 1024 and 4096, 784-1024relu-1024relu-10
#    and 784-4096relu-4096relu-4096relu-10 at 4096 and 16384; strong scaling (global
#    batch fixed, GPUs 1, 2, 4) and weak scaling (per-GPU batch fixed at the smaller
#    global batch: global = R x it); efficiency = throughput / (R x one GPU's at the
#    per-GPU batch of the run) for weak, speedup / R for strong;
# 3. all-reduce time per step and the part not overlapped with the backward pass
#    (--comm-timing; CUDA events around the NCCL calls, tiled strategy, no graphs);
# 4. PyTorch DDP (bench/ddp_torch.py through torchrun) on the same nets, batches and
#    GPU counts, in the same call.
# Writes $OUT/scaling.csv and $OUT/scaling.md (default build/bench/scaling) and compares with the
# model of docs/SCALING.md (bench/scaling_model.py --csv).
set -uo pipefail
DATA=${1:?usage: scaling.sh DATA_DIR}
OUT=${OUT:-build/bench/scaling}
GPUS=${GPUS:-"1 2 4"}
# arch:small:large global batches; PARTS=parity or throughput runs one part (the whole
# script may need more than one 10-minute call: e.g. PARTS=parity, then NETS one by one)
NETS=${NETS:-"784-256relu-10:1024:4096 784-1024relu-1024relu-10:4096:16384 784-4096relu-4096relu-4096relu-10:4096:16384"}
PARTS=${PARTS:-"parity throughput"}
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=.devdata/cjson"
make -j32 BUILD=build-dp $CJSON NCCL=1 CUDA_ARCH="-gencode arch=compute_90,code=sm_90" \
    all build-dp/ffnn_tests > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
F=build-dp/ffnn
HAVE_MPI=0
command -v mpirun >/dev/null 2>&1 && grep -q ", MPI," "$OUT/build.log" && HAVE_MPI=1

# per-step losses within tol of the loss scale (see tests/test_parallel.sh)
compare() { # a.csv b.csv tol
    awk -F, -v tol="$3" 'FNR == 1 { next }
        NR == FNR { a[$2] = $3; sum += ($3 < 0 ? -$3 : $3); n++; next }
        { b[$2] = $3; m++ }
        END { L = sum / n; worst = 0
              for (s in b) { x = a[s]; y = b[s]; d = x - y; if (d < 0) d = -d
                  sc = (x < 0 ? -x : x); if (sc < L) sc = L; r = d / sc
                  if (r > worst) { worst = r; at = s } }
              printf "%d steps, largest %.3g (step %s) %s\n", m, worst, at, worst <= tol ? "ok" : "FAIL"
              exit worst > tol }' "$1" "$2"
}

# 1. parity, 200 steps (Fashion-MNIST, batch 256: 12800 rows = 50 steps/epoch, 4 epochs)
case " $PARTS " in *" parity "*)
{
for opt in sgd adam; do
    lr=0.05; [ $opt = adam ] && lr=0.001
    args="--data $DATA --train-limit 12800 --epochs 4 --batch 256 --optimizer $opt --lr $lr --device cuda --strategy tiled --json"
    $F train $args --log-steps "$OUT/p1_$opt.csv" > /dev/null 2>&1
    for R in $GPUS; do
        [ "$R" = 1 ] && continue
        $F train $args --gpus "$R" --log-steps "$OUT/pg${R}_$opt.csv" > "$OUT/pg${R}_$opt.log" 2>&1
        echo "parity $opt --gpus $R: $(compare "$OUT/p1_$opt.csv" "$OUT/pg${R}_$opt.csv" 1e-4)"
        if [ $HAVE_MPI = 1 ]; then
            mpirun --allow-run-as-root -np "$R" $F train $args \
                --log-steps "$OUT/pm${R}_$opt.csv" > "$OUT/pm${R}_$opt.log" 2>&1
            echo "parity $opt mpirun -np $R: $(compare "$OUT/p1_$opt.csv" "$OUT/pm${R}_$opt.csv" 1e-4)"
        fi
    done
done
[ $HAVE_MPI = 1 ] || echo "parity under mpirun: skipped (no mpirun on the device or no MPI in the build)"
} 2>&1 | tee "$OUT/parity.txt"
;; esac

# 2. + 3. throughput, strong and weak
median_ips() { # the median images/s of the epochs after the first
    grep '"epoch"' "$1" | sed 's/.*"images_per_second": \([0-9.e+]*\).*/\1/' | tail -n +2 |
        sort -g | awk '{a[NR] = $1} END {if (NR) printf "%.1f", a[int((NR + 1) / 2)]; else print "nan"}'
}
case " $PARTS " in *" throughput "*) ;; *) exit 0 ;; esac
[ -s "$OUT/scaling.csv" ] ||
    echo "impl,arch,mode,gpus,global_batch,per_gpu_batch,images_per_s,allreduce_ms,exposed_ms" \
        > "$OUT/scaling.csv"
run_ffnn() { # arch global_batch gpus mode
    local arch=$1 B=$2 R=$3 mode=$4 epochs=6 extra=""
    [ "$R" -gt 1 ] && extra="--gpus $R"
    [ "$B" -ge 16384 ] && epochs=10
    local log="$OUT/ffnn_${arch}_${B}_${R}.json"
    $F train --data "$DATA" --arch "$arch" --batch "$B" --epochs $epochs --device cuda \
        --strategy cublas --json $extra > "$log" 2>&1
    local ar="" ex=""
    if [ "$R" -gt 1 ]; then # the all-reduce, timed on its own run (tiled: no graphs)
        $F train --data "$DATA" --arch "$arch" --batch "$B" --epochs 1 --device cuda \
            --strategy tiled --gpus "$R" --comm-timing > "$log.timing" 2>&1
        ar=$(sed -n 's/.*: \([0-9.]*\) ms\/step from.*/\1/p' "$log.timing")
        ex=$(sed -n 's/.*sums, \([0-9.]*\) ms\/step not.*/\1/p' "$log.timing")
    fi
    echo "ffnn,$arch,$mode,$R,$B,$((B / R)),$(median_ips "$log"),$ar,$ex" >> "$OUT/scaling.csv"
}
run_torch() { # arch global_batch gpus mode
    local line
    line=$(torchrun --standalone --nproc_per_node "$3" bench/ddp_torch.py --arch "$1" \
        --global-batch "$2" --steps 40 --data "$DATA" 2>"$OUT/torch_$1_$2_$3.err" | tail -1)
    local ips
    ips=$(echo "$line" | sed -n 's/.*"samples_per_s": \([0-9.]*\).*/\1/p')
    echo "torch_ddp,$1,$4,$3,$2,$(($2 / $3)),${ips:-nan},," >> "$OUT/scaling.csv"
}
for net in $NETS; do
    set -- $(echo "$net" | tr : ' ')
    arch=$1; small=$2; large=$3
    for R in $GPUS; do
        for B in $small $large; do # strong: the global batch fixed
            run_ffnn "$arch" "$B" "$R" strong
            run_torch "$arch" "$B" "$R" strong
        done
        [ "$R" = 1 ] && continue # weak: per-GPU batch = small, global = R x small
        run_ffnn "$arch" $((small * R)) "$R" weak
        run_torch "$arch" $((small * R)) "$R" weak
        if [ "$R" -gt 1 ]; then # one GPU at the weak run's global batch, for reference
            run_ffnn "$arch" $((small * R)) 1 weak-ref
        fi
    done
done

# efficiency table: strong = ips(R) / (R ips(1)) at the same global batch;
# weak = ips(R, R x b) / (R ips(1, b))
python3 - "$OUT/scaling.csv" <<'EOF' | tee "$OUT/scaling.md"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def ips(impl, arch, B, R):
    for r in rows:
        if r["impl"] == impl and r["arch"] == arch and int(r["global_batch"]) == B and int(r["gpus"]) == R:
            try: return float(r["images_per_s"])
            except ValueError: return None
    return None
print("| impl | arch | mode | GPUs | global batch | images/s | efficiency | all-reduce ms/step | not overlapped |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    if r["mode"] == "weak-ref": continue
    R, B = int(r["gpus"]), int(r["global_batch"])
    v = ips(r["impl"], r["arch"], B, R)
    base = ips(r["impl"], r["arch"], B if r["mode"] == "strong" else B // R, 1)
    eff = f"{v / (R * base):.2f}" if v and base else "-"
    print(f"| {r['impl']} | {r['arch']} | {r['mode']} | {R} | {B} | {r['images_per_s']} | {eff} | {r['allreduce_ms'] or '-'} | {r['exposed_ms'] or '-'} |")
EOF
python3 bench/scaling_model.py --measured "$OUT/scaling.csv" > "$OUT/model_vs_measured.md" 2>&1
cat "$OUT/parity.txt" "$OUT/model_vs_measured.md" 2>/dev/null
