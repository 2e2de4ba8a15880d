#!/usr/bin/env bash
# The measurement behind auto's fp32 rule (src/strategy/auto.c: persistent_fp32,
# graph_fp32_rule): 784-Hrelu-10 for H in $WIDTHS at each batch of $BATCHES, every
# fp32 strategy that could take it ($STRATEGIES) and auto itself, one device call,
# interleaved, $ROUNDS rounds. Each cell: the median of epochs 2..$EPOCHS of one
# process (ms, the trainer's synchronised epoch seconds), then the last train loss.
#   [WIDTHS="64 256 1024" BATCHES="64 256" ROUNDS=2] bash bench/auto_width.sh DATA_DIR [BIN]
#   [ARCHS="784-512relu-512relu-10 784-128relu-10"] ...   whole architectures instead of widths
#   [EXTRA="--optimizer adam"] ...   more options of ffnn train
# Prints one line per (net, batch, round): "NET B r: strategy ms (loss) ...".
set -uo pipefail
DATA=${1:?usage: auto_width.sh DATA_DIR [BIN]}
BIN=${2:-build/ffnn}
WIDTHS=${WIDTHS:-64 128 256 384 512 768 1024}
BATCHES=${BATCHES:-32 64 128 256 384 512}
STRATEGIES=${STRATEGIES:-persistent cublaslt graph auto}
ROUNDS=${ROUNDS:-1}
EPOCHS=${EPOCHS:-4}
med() {
    python3 -c "import sys, json, statistics
r = [json.loads(l) for l in sys.stdin if l.startswith('{')]
e = [x for x in r if 'seconds' in x]
t = [1e3 * x['seconds'] for x in e[1:]]
print(f\"{statistics.median(t):.3f} ({e[-1]['train_loss']:.5f})\" if t else 'refused')"
}
for r in $(seq "$ROUNDS"); do
    for h in ${ARCHS:-$WIDTHS}; do
        arch=$h; [ -n "${ARCHS:-}" ] || arch="784-${h}relu-10"
        for b in $BATCHES; do
            line="$h $b r$r:"
            for s in $STRATEGIES; do
                line="$line  $s $("$BIN" train --data "$DATA" --arch "$arch" \
                    --batch "$b" --epochs "$EPOCHS" --lr 0.05 --seed 1 --json --device cuda \
                    --strategy "$s" ${EXTRA:-} 2>/dev/null | med)"
            done
            echo "$line"
        done
    done
done
