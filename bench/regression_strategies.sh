#!/usr/bin/env bash
# Report 001's whole regression run (32-256relu:nobias-1:nobias, mse, batch 256,
# lr 0.002, 100 epochs of synth:regression:25600 = 10,000 steps) with every cuda
# strategy that takes it: the sum of the 100 synchronised epoch times (warm-up
# included: it is the whole run) and the final test loss. Needs build/ffnn.
#   bash bench/regression_strategies.sh
# Feeds the report-001 rows of docs/RESULTS.md ("Training speed on the GPU", "The experiments of the reports").
# Prints | strategy | epochs | seconds (sum) | train loss | test loss |.
set -uo pipefail
for k in persistent graph fused cublas tiled naive auto; do
    build/ffnn train --data synth:regression:25600 --arch 32-256relu:nobias-1:nobias \
        --loss mse --batch 256 --lr 0.002 --epochs 100 --device cuda --strategy $k --json \
        2>/dev/null | python3 -c "
import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith('{')]
print('| %s | %d | %.4f | %.5f | %.5f |' % (sys.argv[1], len(r), sum(x['seconds'] for x in r),
      r[-1]['train_loss'], r[-1]['test_loss']))" $k
done
