#!/usr/bin/env bash
# Issue 10's "must hold" in one device call: the layered redesign against the
# tree it started from, same GPU, same call. Builds both (the old one exported
# into .baseline/ by `git archive 7bffc67 src include cli Makefile`), runs every
# test of the new tree (the golden suite compares 50 steps per strategy bit for
# bit with the lines recorded before the redesign), then bench/vs_torch.py's
# rows for batch 64, 256, 1024 and the wide net with both binaries, interleaved.
#   bash bench/before_after.sh DATA_DIR
set -uo pipefail
DATA=${1:?usage: before_after.sh DATA_DIR}
OUT=${OUT:-device-out}; mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
CJSON=""; [ -f /usr/include/cjson/cJSON.h ] || CJSON="CJSON_DIR=$PWD/.devdata/cjson"
ARCH='-gencode arch=compute_90,code=sm_90'
make -j16 $CJSON CUDA_ARCH="$ARCH" all build/ffnn_tests > "$OUT/build.log" 2>&1 &
( cd .baseline && make -j16 $CJSON CUDA_ARCH="$ARCH" build/ffnn > "$OUT/build_before.log" 2>&1 ) &
wait
[ -x build/ffnn_tests ] || { tail -40 "$OUT/build.log"; exit 1; }
[ -x .baseline/build/ffnn ] || { tail -40 "$OUT/build_before.log"; exit 1; }
mkdir -p /usr/share/datasets && ln -sfn "$(realpath "$DATA")" /usr/share/datasets/fashion-mnist
FFNN_PYTHON=$(command -v python3) build/ffnn_tests 2>&1 | tee "$OUT/tests.log" | grep -v "^PASS"
CONFIGS=784-256relu-10:64,784-256relu-10:256,784-256relu-10:1024,784-1024relu-1024relu-10:1024
MODES=auto,persistent,graph,fused,cublas,tiled,cublas:tf32,cublas:bf16
for round in 1 2; do
    for who in before after; do
        bin=build/ffnn; py=bench/vs_torch.py
        [ $who = before ] && bin=.baseline/build/ffnn py=.baseline/bench/vs_torch.py
        python3 $py "$DATA" --ffnn "$bin" --configs "$CONFIGS" --kernels "$MODES" \
            --torch-modes epoch_graph --epochs 5 --out "$OUT/vs_torch_${who}_$round.json" \
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
