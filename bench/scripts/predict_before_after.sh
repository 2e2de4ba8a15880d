#!/usr/bin/env bash
# predict_before_after.sh OLD_FFNN NEW_FFNN [MODEL] - `ffnn predict` on the 10,000
# Fashion-MNIST test images with two builds of ffnn, alternating, 5 runs each; prints
# each run's seconds, the medians and their ratio, and checks that both print the
# same predictions (classes exactly, probabilities within 1e-5). MODEL: a 784-input
# model file (default: one epoch of 784-256relu-10 trained by NEW_FFNN into a
# temporary directory).
set -euo pipefail
old=$1 new=$2
data=${FFNN_FASHION:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
model=${3:-$tmp/m.safetensors}
[ -f "$model" ] || "$new" train --data "$data" --arch 784-256relu-10 --epochs 1 \
    --save "$model" > /dev/null
input=$data/t10k-images-idx3-ubyte.gz
run() { local s e; s=$(date +%s.%N); "$1" predict --model "$model" --input "$input" > "$2"; e=$(date +%s.%N); echo "$e - $s" | bc; }
o=() n=()
for i in 1 2 3 4 5; do
    o+=("$(run "$old" "$tmp/old.csv")")
    n+=("$(run "$new" "$tmp/new.csv")")
done
# classes compared exactly; probabilities within the predictor's 1e-5 (the reference
# sums without fma, the omp kernels with it: the last printed digit may differ)
same=$(/usr/bin/python3 - "$tmp/old.csv" "$tmp/new.csv" <<'PY'
import sys
a = [l.split(",") for l in open(sys.argv[1])]
b = [l.split(",") for l in open(sys.argv[2])]
if len(a) != len(b) or any(x[0] != y[0] for x, y in zip(a, b)):
    print("classes differ"); sys.exit()
d = max(abs(float(u) - float(v)) for x, y in zip(a, b) for u, v in zip(x[1:], y[1:]))
print(f"classes identical, probabilities within {d:.1e}" + ("" if d <= 1e-5 else " (over 1e-5)"))
PY
)
median() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
mo=$(median "${o[@]}") mn=$(median "${n[@]}")
echo "old: ${o[*]} s (median $mo)"
echo "new: ${n[*]} s (median $mn)"
echo "speed-up: $(echo "scale=1; $mo / $mn" | bc)x; predictions: $same"
