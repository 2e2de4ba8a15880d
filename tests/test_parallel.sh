#!/bin/sh
# test_parallel.sh CASE - the data-parallel runs of ffnn train under mpirun on the cpu
# backend (tests/test_parallel.c runs each case and reads its exit status: 0 pass,
# 77 skip with the reason as the last line of stdout, anything else fail).
#
#   parity_sgd     mpirun -np 2 and -np 3 vs one process, SGD, per-step losses; -np 3
#                  twice: bit for bit (the reduction order is fixed); -np 2 with
#                  --strategy tune: auto (nothing measured), the same bits
#   parity_adam    the same with Adam and with momentum
#   features       the training features' dropout, clipping, adamw + decay, schedule + warm-up and
#                  EMA under -np 2 and -np 3 vs one process, per-step losses
#   buckets        a 30 MB gradient (two buckets) under -np 3 with a one-row last batch
#   resume         -np 2 stopped at step 30 (--max-steps, --checkpoint) and resumed with
#                  -np 2: the losses after step 30 are those of the run that never
#                  stopped, bit for bit; resumed in one process: within the tolerance
#   kill_rank      rank 1 killed (SIGKILL) mid-run: every rank stops within 30 s, the
#                  message names rank 1, the last checkpoint loads and resumes
#   other_data     rank 1 loads another data set of the same size: every rank stops
#                  before training with a message naming rank 1
#   early_stopping --val-split with --early-stopping 3 under -np 2 and -np 3: every rank
#                  stops at the epoch one process stops at (rank 0's validation loss
#                  decides on every rank), the same epoch is restored, per-step losses
#                  within the tolerance, every rank exits 0, the model is saved; -np 2
#                  cut after the best epoch and resumed: the same stop and model bytes
#   nan            a diverging run (lr 1e6) under -np 2: every rank stops at the same
#                  step with one message naming the step and a rank; exit status 1
#   sweep          ffnn sweep under -np 2 and -np 3 (configurations spread over the
#                  ranks, no all-reduce) vs one process: the same ranked table and
#                  --csv (but the seconds), the same --save-best, --save-all and
#                  --ensemble files byte for byte (the winner trained on a rank > 0),
#                  with --halving; --cv 3 --json the same lines (but the seconds)
#   sweep_cuda     the same on cuda (a GPU machine; each rank on the GPU of its place
#                  on its node): -np 2 vs one process, the table and --save-best
#   sweep_errors   a bad option under -np 2: one message, every rank ends (exit 2);
#                  rank 1 alone without its data file: its message, named rank 1, and
#                  rank 0's naming rank 1, every rank ends; --help printed once
#
# The tolerance: |a - b| <= 1e-6 max(|a|, |b|, L) per step, L the mean per-step loss of
# the one-process run (for the steps whose loss is at least L, plain 1e-6 relative; a
# near-zero loss, e.g. of a one-row last batch, is compared at the run's loss scale).
# FFNN_BIN overrides build/ffnn; MPIRUN overrides mpirun.
set -u
case_name=${1:-}
ffnn=${FFNN_BIN:-build/ffnn}
mpirun=${MPIRUN:-mpirun}
skip() { echo "$1"; exit 77; }
fail() { [ -s "${dir:-/nonexistent}/err" ] && cat "$dir/err" >&2; echo "FAIL: $1" >&2; exit 1; }

[ -x "$ffnn" ] || skip "$ffnn not built (make; run the tests from the repository root)"
command -v "$mpirun" >/dev/null 2>&1 || skip "mpirun not found (apt-get install openmpi-bin libopenmpi-dev)"
dir=$(mktemp -d "${TMPDIR:-/tmp}/ffnn_parallel.XXXXXX") || fail "mktemp"
trap 'rm -rf "$dir"' EXIT
# Open MPI as root, more ranks than cores, quiet about the missing high-speed networks
export OMPI_MCA_btl_base_warn_component_unused=0
# shared-memory copies without cross-memory attach (ptrace), which containers often forbid
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi() { "$mpirun" --allow-run-as-root --oversubscribe -np "$@"; }

# compare A.csv B.csv [first_step]: the --log-steps files agree per step within the
# tolerance (from first_step on, counted over the run); prints the largest difference
compare() {
    awk -F, -v from="${3:-1}" '
        FNR == 1 { next }
        NR == FNR { a[$2] = $3; sum += ($3 < 0 ? -$3 : $3); n++; next }
        $2 >= from { if (!($2 in a)) { print "step " $2 " missing"; bad = 1; exit 1 }
                     b[$2] = $3; m++ }
        END {
            if (bad) exit 1
            if (m == 0) { print "no steps to compare"; exit 1 }
            L = sum / n; worst = 0
            for (s in b) {
                x = a[s]; y = b[s]; d = x - y; if (d < 0) d = -d
                s1 = x < 0 ? -x : x; s2 = y < 0 ? -y : y
                scale = s1 > s2 ? s1 : s2; if (scale < L) scale = L
                r = d / scale; if (r > worst) { worst = r; at = s }
                if (r > 1e-6) { print "step " s ": " x " vs " y " (" r " of the scale)"; bad = 1 }
            }
            printf "%d steps, largest difference %.3g of the loss scale (step %s)\n", m, worst, at
            exit bad
        }' "$1" "$2"
}

common="--threads 1 --device cpu --json"

# The per-step losses of the -np NP run ($dir/npNP.csv) against one process's
# ($dir/one.csv): printed as "LABEL -np NP: [NOTE; ]the comparison", the case fails
# outside the tolerance. check_np LABEL NP [NOTE]
check_np() {
    out=$(compare "$dir/one.csv" "$dir/np$2.csv")
    ok=$?
    echo "$1 -np $2: ${3:+$3; }$out"
    [ $ok -eq 0 ] || fail "$1 -np $2"
}

# ffnn train $args $common in one process, then under -np 2 and -np 3 (their logs
# $dir/np2.csv, $dir/np3.csv): check_np LABEL for each. parity LABEL
parity() {
    "$ffnn" train $args $common --log-steps "$dir/one.csv" >/dev/null 2>"$dir/err" || fail "one process"
    for np in 2 3; do
        mpi $np "$ffnn" train $args $common --log-steps "$dir/np$np.csv" >/dev/null 2>"$dir/err" ||
            fail "mpirun -np $np exited with $?"
        check_np "$1" $np
    done
}

case "$case_name" in
parity_sgd)
    # 2001 rows, batch 100: 20 full batches and a last batch of one row (ranks 1 and 2
    # of -np 3 get none); -np 3 splits 100 rows 34/33/33
    args="--data synth:points:2001 --arch 2-30tanh-30tanh-1 --loss bce --lr 0.1 --batch 100 --epochs 10"
    parity sgd
    # the reduction order is fixed: the same run again gives the same bits
    mpi 3 "$ffnn" train $args $common --log-steps "$dir/np3b.csv" >/dev/null 2>"$dir/err" ||
        fail "mpirun -np 3, second run"
    cmp -s "$dir/np3.csv" "$dir/np3b.csv" || fail "two -np 3 runs differ"
    echo "sgd -np 3 twice: the same losses, bit for bit"
    # --strategy tune in data-parallel training is auto: nothing measured, the same bits
    mpi 2 "$ffnn" train $args $common --strategy tune --log-steps "$dir/np2t.csv" \
        >"$dir/tune.out" 2>"$dir/err" || fail "mpirun -np 2 --strategy tune exited with $?"
    cmp -s "$dir/np2.csv" "$dir/np2t.csv" || fail "-np 2 --strategy tune differs from auto"
    ! grep -q "tune:" "$dir/tune.out" "$dir/err" || fail "-np 2 --strategy tune measured"
    echo "sgd -np 2 --strategy tune: auto's losses, bit for bit, nothing measured"
    ;;
parity_adam)
    for opt in adam momentum; do
        args="--data synth:regression:2001 --arch 32-64relu-32tanh-1 --optimizer $opt --lr 0.003 --batch 100 --epochs 8"
        parity "$opt"
    done
    ;;
features)
    # the training features under -np 2 and -np 3 against one process: dropout (each
    # rank's masks continue the one-process stream from its first row), clipping by
    # norm and value after the all-reduce, adamw with decay, a step schedule with
    # warm-up, EMA (the evaluation reads it; the losses are the training's)
    args="--data synth:points:2001 --arch 2-30tanh:dropout0.2-30tanh:dropout0.1-1 --loss bce --optimizer adamw --weight-decay 0.05 --lr 0.01 --lr-schedule step:2:0.5 --warmup-steps 10 --clip-grad-norm 0.5 --clip-grad-value 0.2 --ema 0.9 --batch 100 --epochs 6"
    parity features
    ;;
early_stopping)
    args="--data synth:points:600 --arch 2-64tanh-64tanh-1 --loss bce --lr 0.5 --batch 50 --epochs 200 --val-split 0.3 --early-stopping 3"
    "$ffnn" train $args $common --log-steps "$dir/one.csv" --save "$dir/one.safetensors" \
        >"$dir/one.out" 2>"$dir/err" || fail "one process"
    want=$(grep -h "^early stopping:" "$dir/one.out" "$dir/err")
    case "$want" in *"did not improve"*) ;; *) fail "one process did not stop early: $want" ;; esac
    for np in 2 3; do
        mpi $np "$ffnn" train $args $common --log-steps "$dir/np$np.csv" --save "$dir/np$np.safetensors" \
            >"$dir/np$np.out" 2>"$dir/err" || fail "mpirun -np $np exited with $?"
        got=$(grep -h "^early stopping:" "$dir/np$np.out" "$dir/err")
        [ "$got" = "$want" ] || fail "-np $np: '$got', one process: '$want'"
        [ "$(grep -c '"epoch"' "$dir/np$np.out")" = "$(grep -c '"epoch"' "$dir/one.out")" ] ||
            fail "-np $np ran another number of epochs"
        [ -s "$dir/np$np.safetensors" ] || fail "-np $np saved no model"
        check_np "early stopping" $np "${want#early stopping: }"
    done
    # -np 2 cut mid-epoch after the best epoch, before the stop, and resumed with -np 2:
    # the same stop, the same line and the same model bytes as the -np 2 run above
    best=$(echo "$want" | sed -n 's/.*restored epoch \([0-9]*\).*/\1/p')
    [ -n "$best" ] || fail "no restored epoch in '$want'"
    cut=$(( 9 * (best + 1) + 4 )) # 420 training rows in batches of 50: 9 steps an epoch
    mpi 2 "$ffnn" train $args $common --checkpoint "$dir/ck.safetensors" --max-steps $cut \
        >/dev/null 2>"$dir/err" || fail "-np 2 stopped at step $cut"
    mpi 2 "$ffnn" train --resume "$dir/ck.safetensors" --data synth:points:600 --val-split 0.3 \
        $common --save "$dir/resumed.safetensors" >"$dir/resumed.out" 2>"$dir/err" ||
        fail "-np 2 resumed from step $cut"
    got=$(grep -h "^early stopping:" "$dir/resumed.out" "$dir/err")
    [ "$got" = "$want" ] || fail "resumed at step $cut: '$got', uninterrupted: '$want'"
    cmp -s "$dir/np2.safetensors" "$dir/resumed.safetensors" ||
        fail "the resumed -np 2 run saved another model than the uninterrupted one"
    echo "early stopping -np 2 cut at step $cut (best epoch $best) and resumed: the same stop and model bytes"
    ;;
buckets)
    # 7.6 M parameters = 30 MB of gradients: two buckets (layers 2 + 1, then layer 0);
    # 13 rows in batches of 4: the last batch has one row, so under -np 3 ranks 1 and 2
    # have none in that step and must still take part in both buckets
    args="--data synth:regression:13 --arch 32-3000relu-2500relu-1 --lr 0.01 --batch 4 --epochs 2"
    "$ffnn" train $args $common --log-steps "$dir/one.csv" >/dev/null 2>"$dir/err" || fail "one process"
    mpi 3 "$ffnn" train $args $common --log-steps "$dir/np3.csv" >/dev/null 2>"$dir/err" ||
        fail "mpirun -np 3 exited with $?"
    out=$(compare "$dir/one.csv" "$dir/np3.csv")
    ok=$?
    echo "two buckets, a rank without rows, -np 3: $out"
    [ $ok -eq 0 ] || fail "two buckets -np 3"
    ;;
resume)
    args="--data synth:regression:2000 --arch 32-48relu-1 --optimizer adam --lr 0.003 --batch 64 --epochs 3"
    mpi 2 "$ffnn" train $args $common --log-steps "$dir/full.csv" >/dev/null 2>"$dir/err" || fail "full run"
    mpi 2 "$ffnn" train $args $common --checkpoint "$dir/ck.safetensors" --max-steps 40 \
        >/dev/null 2>"$dir/err" || fail "the run stopped at step 40"
    # the rest: -np 2 again (bit for bit), and one process (another rank count)
    data="--data synth:regression:2000"
    mpi 2 "$ffnn" train --resume "$dir/ck.safetensors" $data $common \
        --log-steps "$dir/rest2.csv" >/dev/null 2>"$dir/err" || fail "resume with -np 2"
    "$ffnn" train --resume "$dir/ck.safetensors" $data $common --log-steps "$dir/rest1.csv" \
        >/dev/null 2>"$dir/err" || fail "resume in one process"
    # rest*.csv hold the epochs from the checkpoint's on (steps counted from that epoch's
    # start); step 41 onwards must be the full run's
    awk -F, 'NR == FNR { if (FNR > 1) a[$2] = $3; next }
             FNR > 1 && $2 > 40 { n++; if (a[$2] != $3) { print "step " $2 ": " a[$2] " vs " $3; bad = 1 } }
             END { if (n == 0) { print "no steps after 40"; exit 1 }; exit bad }' \
        "$dir/full.csv" "$dir/rest2.csv" || fail "-np 2 resumed differs from the full -np 2 run"
    echo "resume -np 2 -> -np 2: bit for bit after step 40"
    out=$(compare "$dir/full.csv" "$dir/rest1.csv" 41)
    ok=$?
    echo "resume -np 2 -> 1 process: $out"
    [ $ok -eq 0 ] || fail "one process resumed"
    ;;
kill_rank)
    args="--data synth:regression:20000 --arch 32-256relu-256relu-1 --batch 32 --epochs 50"
    ck="$dir/ck.safetensors"
    "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$ffnn" train $args $common \
        --checkpoint "$ck" --checkpoint-every 20 >"$dir/out.txt" 2>"$dir/err.txt" &
    launcher=$!
    waited=0 # until the first checkpoint exists (at most 60 s)
    while [ ! -s "$ck" ] && [ $waited -lt 600 ]; do sleep 0.1; waited=$((waited + 1)); done
    [ -s "$ck" ] || { kill "$launcher" 2>/dev/null; fail "no checkpoint after 60 s"; }
    # rank 1: the child process of the launcher whose environment says so
    victim=""
    for proc in /proc/[0-9]*; do # (no ps: procps is not in every image)
        [ "$(sed -n 's/^PPid:[[:space:]]*//p' "$proc/status" 2>/dev/null)" = "$launcher" ] ||
            continue
        if tr '\0' '\n' < "$proc/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
            victim=${proc#/proc/}
        fi
    done
    [ -n "$victim" ] || { kill "$launcher" 2>/dev/null; fail "rank 1's process not found"; }
    start=$(date +%s)
    kill -KILL "$victim"
    waited=0
    while kill -0 "$launcher" 2>/dev/null && [ $waited -lt 300 ]; do
        sleep 0.1; waited=$((waited + 1))
    done
    if kill -0 "$launcher" 2>/dev/null; then
        kill -KILL "$launcher" 2>/dev/null
        fail "the ranks still run 30 s after rank 1 was killed"
    fi
    wait "$launcher"
    rc=$?
    seconds=$(( $(date +%s) - start ))
    [ $rc -ne 0 ] || fail "mpirun exited with 0 after rank 1 was killed"
    grep -qi "rank 1" "$dir/err.txt" "$dir/out.txt" || {
        cat "$dir/err.txt" >&2; fail "no message names rank 1"; }
    # the checkpoint loads: resumed in one process (another rank count), stopped at once
    "$ffnn" train --resume "$ck" --data synth:regression:20000 $common --max-steps 1 \
        >"$dir/info.txt" 2>&1 && grep -q "resumed from" "$dir/info.txt" ||
        { cat "$dir/info.txt" "$dir/err.txt" >&2; fail "the last checkpoint does not resume"; }
    echo "kill_rank: every rank stopped ${seconds} s after rank 1 was killed (exit $rc); \
$(grep -i -m1 "rank 1" "$dir/err.txt" "$dir/out.txt" | cut -c1-160)"
    ;;
other_data)
    # rank 1 loads another data set of the same size (the synth generator's seed 2):
    # every rank stops before training, naming rank 1
    mpi 2 sh -c 'seed=1; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && seed=2
                 exec "$0" train --data synth:points:2000:$seed --arch 2-8tanh-1 --loss bce \
                     --epochs 1 --threads 1 --device cpu --json' "$ffnn" \
        >"$dir/out.txt" 2>"$dir/err.txt"
    rc=$?
    [ $rc -ne 0 ] || fail "ranks with different data exited with 0"
    grep -q "rank 1's training set differs" "$dir/err.txt" ||
        { cat "$dir/err.txt" >&2; fail "no message names rank 1's data"; }
    echo "other_data: $(grep -m1 "training set differs" "$dir/err.txt" | cut -c1-200)"
    ;;
nan)
    args="--data synth:points:2000 --arch 2-30tanh-30tanh-1 --loss mse --lr 1e6 --batch 100 --epochs 3"
    ck="$dir/ck.safetensors"
    mpi 2 "$ffnn" train $args $common --checkpoint "$ck" >"$dir/out.txt" 2>"$dir/err.txt"
    rc=$?
    [ $rc -ne 0 ] || fail "a diverging run exited with 0"
    grep -q "the loss is" "$dir/err.txt" || { cat "$dir/err.txt" >&2; fail "no loss message"; }
    lines=$(grep -c "the loss is" "$dir/err.txt")
    [ "$lines" -eq 1 ] || { cat "$dir/err.txt" >&2; fail "$lines messages, expected one (rank 0's)"; }
    [ ! -e "$ck" ] || fail "a checkpoint was written after the loss became NaN/Inf"
    echo "nan: $(grep -m1 "the loss is" "$dir/err.txt" | cut -c1-200)"
    ;;
sweep)
    args="--data synth:points:600 --arch 2-16tanh-1 --loss bce --epochs 9 --batch 50 --val-split 0.3 \
          --device cpu --threads 1 --lr 0.03,0.1,0.3,0.5 --seed 1-3 --optimizer sgd,adam \
          --halving 2 --min-epochs 2 --ensemble 3"
    "$ffnn" sweep $args "$dir/e1.st" --save-best "$dir/b1.st" --save-all "$dir/a1" \
        --csv "$dir/one.csv" >"$dir/one.txt" 2>"$dir/err" || fail "one process"
    best=$(awk 'NR == 2 { print $2 }' "$dir/one.txt")
    for np in 2 3; do
        mpi $np "$ffnn" sweep $args "$dir/e$np.st" --save-best "$dir/b$np.st" \
            --save-all "$dir/a$np" --csv "$dir/np$np.csv" >"$dir/np$np.txt" 2>"$dir/err" ||
            fail "mpirun -np $np exited with $?"
        # the table but its seconds column (the 12th field: three settings) and the
        # files' names
        for f in one np$np; do
            awk '/^saved/ { for (i = 1; i <= NF; i++) if ($i ~ /\//) $i = "FILE"; print; next }
                 NR > 1 { $12 = "" } { print }' "$dir/$f.txt" >"$dir/$f.table"
            cut -d, -f1-4,6- "$dir/$f.csv" >"$dir/$f.cols"
        done
        cmp -s "$dir/one.table" "$dir/np$np.table" ||
            { diff "$dir/one.table" "$dir/np$np.table" >&2; fail "-np $np: another table"; }
        cmp -s "$dir/one.cols" "$dir/np$np.cols" || fail "-np $np: another --csv"
        cmp -s "$dir/b1.st" "$dir/b$np.st" || fail "-np $np: another --save-best file"
        cmp -s "$dir/e1.st" "$dir/e$np.st" || fail "-np $np: another --ensemble file"
        for m in "$dir"/a1/*; do
            cmp -s "$m" "$dir/a$np/${m##*/}" || fail "-np $np: another ${m##*/}"
        done
        [ "$(grep -c "at a time" "$dir/err")" = 1 ] || fail "-np $np: not one rank's messages"
        echo "sweep -np $np: the table of one process (winner: configuration $best, on rank $(( (best - 1) % np ))), the same --csv and model files byte for byte"
    done
    args="--data synth:points:600 --arch 2-16tanh-1 --loss bce --epochs 4 --batch 50 --cv 3 \
          --device cpu --threads 1 --lr 0.03,0.1,0.3 --seed 1-2 --json"
    "$ffnn" sweep $args 2>"$dir/err" | sed 's/"seconds": [0-9.e+-]*//' >"$dir/cv1.txt" ||
        fail "one process --cv"
    mpi 2 "$ffnn" sweep $args 2>"$dir/err" | sed 's/"seconds": [0-9.e+-]*//' >"$dir/cv2.txt" ||
        fail "mpirun -np 2 --cv"
    [ -s "$dir/cv1.txt" ] && cmp -s "$dir/cv1.txt" "$dir/cv2.txt" || fail "-np 2 --cv 3: other lines"
    echo "sweep --cv 3 -np 2: the same JSON lines (each configuration's folds on one rank)"
    ;;
sweep_cuda)
    args="--data synth:points:2000 --arch 2-64relu-64tanh-2 --epochs 3 --batch 64 --val-split 0.25 \
          --device cuda --lr 0.05,0.1,0.2,0.4 --seed 1-2 --quiet"
    "$ffnn" sweep $args --save-best "$dir/b1.st" >"$dir/one.txt" 2>"$dir/err" || fail "one process"
    mpi 2 "$ffnn" sweep $args --save-best "$dir/b2.st" >"$dir/np2.txt" 2>"$dir/err" ||
        fail "mpirun -np 2 exited with $?"
    for f in one np2; do
        awk '/^saved/ { for (i = 1; i <= NF; i++) if ($i ~ /\//) $i = "FILE"; print; next }
             NR > 1 { $11 = "" } { print }' "$dir/$f.txt" >"$dir/$f.table"
    done
    cmp -s "$dir/one.table" "$dir/np2.table" ||
        { diff "$dir/one.table" "$dir/np2.table" >&2; fail "-np 2 on cuda: another table"; }
    cmp -s "$dir/b1.st" "$dir/b2.st" || fail "-np 2 on cuda: another --save-best file"
    echo "sweep on cuda -np 2: the table of one process, --save-best byte for byte"
    ;;
sweep_errors)
    timeout 120 "$mpirun" --allow-run-as-root --oversubscribe -np 2 "$ffnn" sweep \
        --data synth:points:600 --lr 0.1,abc --device cpu >"$dir/out.txt" 2>"$dir/err.txt"
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "a bad option: exit $rc"
    [ "$(grep -c "expects a number" "$dir/err.txt")" = 1 ] ||
        { cat "$dir/err.txt" >&2; fail "a bad option: not one message"; }
    echo "sweep, a bad option under -np 2: exit $rc, $(grep -m1 "expects" "$dir/err.txt")"
    timeout 120 "$mpirun" --allow-run-as-root --oversubscribe -np 2 sh -c \
        'd=synth:points:600; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && d=/nonexistent/data.csv
         exec "$0" sweep --data $d --arch 2-8tanh-1 --loss bce --lr 0.1,0.2 --epochs 2 \
             --device cpu --threads 1' "$ffnn" >"$dir/out.txt" 2>"$dir/err.txt"
    rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "rank 1 without its data: exit $rc"
    grep -q "rank 1 of 2:" "$dir/err.txt" && grep -q "/nonexistent/data.csv" "$dir/err.txt" &&
        grep -q "rank 1 of 2 failed" "$dir/err.txt" ||
        { cat "$dir/err.txt" >&2; fail "rank 1 without its data: no message naming rank 1"; }
    [ ! -s "$dir/out.txt" ] || fail "rank 1 without its data: a table was printed"
    echo "sweep, rank 1 without its data: exit $rc, $(grep -m1 "failed" "$dir/err.txt")"
    mpi 2 "$ffnn" sweep --help >"$dir/out.txt" 2>"$dir/err.txt" || fail "--help: exit $?"
    [ "$(grep -c "^usage: ffnn sweep" "$dir/out.txt")" = 1 ] || fail "--help: not printed once"
    ;;
*)
    echo "usage: test_parallel.sh parity_sgd|parity_adam|buckets|resume|kill_rank|other_data|nan|sweep|sweep_cuda|sweep_errors" >&2
    exit 2
    ;;
esac
exit 0
