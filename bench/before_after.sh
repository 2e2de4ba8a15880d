#!/usr/bin/env bash
# A change against the tree it started from, same GPU, same call. Builds both (the
# old one exported into $BASE, default .baseline/, e.g. by `git archive 7bffc67 src
# include cli bench Makefile | tar -x -C .baseline` - issue 10's redesign), runs every
# test of the new tree unless RUN_TESTS=0 (the golden suite compares 50 steps per
# strategy bit for bit with the lines recorded before the redesign), then
# bench/vs_torch.py's rows ($CONFIGS x $MODES, default batch 64, 256, 1024 and the
# wide net) with both binaries, interleaved, two rounds, the faster of each kept.
#   [BASE=.baseline12 RUN_TESTS=0 CONFIGS=... MODES=... TORCH_MODES=...] bash bench/before_after.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: before_after.sh DATA_DIR}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
ARCH='-gencode arch=compute_90,code=sm_90'
make -j16 $CJSON CUDA_ARCH="$ARCH" all build/ffnn_tests > "$OUT/build.log" 2>&1 &
BASE=${BASE:-.baseline}
( cd "$BASE" && make -j16 $CJSON CUDA_ARCH="$ARCH" build/ffnn > "$OUT/build_before.log" 2>&1 ) &
wait
[ -x build/ffnn_tests ] || { tail -40 "$OUT/build.log"; exit 1; }
[ -x "$BASE/build/ffnn" ] || { tail -40 "$OUT/build_before.log"; exit 1; }
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
[ "${RUN_TESTS:-1}" = 0 ] ||
    FFNN_PYTHON=$(command -v python3) build/ffnn_tests 2>&1 | tee "$OUT/tests.log" | grep -v "^PASS"
CONFIGS=${CONFIGS:-784-256relu-10:64,784-256relu-10:256,784-256relu-10:1024,784-1024relu-1024relu-10:1024}
MODES=${MODES:-auto,persistent,graph,fused,cublas,tiled,cublas:tf32,cublas:bf16}
for round in 1 2; do
    for who in before after; do
        bin=build/ffnn; py=bench/vs_torch.py
        [ $who = before ] && bin=$BASE/build/ffnn py=$BASE/bench/vs_torch.py
        # the PyTorch rows: epoch graphs, and once TORCH_MODES (e.g. compile_graph)
        tm=epoch_graph; [ $who = after ] && [ $round = 1 ] && tm=${TORCH_MODES:-epoch_graph}
        python3 $py "$DATA" --ffnn "$bin" --configs "$CONFIGS" --kernels "$MODES" \
            --torch-modes "$tm" --epochs 5 --out "$OUT/vs_torch_${who}_$round.json" \
            > "$OUT/vs_torch_${who}_$round.md" 2>&1
    done
done
python3 - "$OUT" <<'PY'
import json, sys, statistics
out = sys.argv[1]
rows = {}
for who in ("before", "after"):
    for rnd in (1, 2):
        for r in json.load(open(f"{out}/vs_torch_{who}_{rnd}.json")):
            if r["system"] == "ffnn":
                rows.setdefault((r["arch"], r["batch"], r["mode"]), {}).setdefault(who, []).append(r["ms_per_epoch"])
print("| arch | batch | strategy | before ms/epoch | after ms/epoch | after/before |")
print("|---|---|---|---|---|---|")
for (arch, batch, mode), d in rows.items():
    b, a = min(d.get("before", [float("nan")])), min(d.get("after", [float("nan")]))
    print(f"| {arch} | {batch} | {mode} | {b:.2f} | {a:.2f} | {a / b:.3f} |")
PY
