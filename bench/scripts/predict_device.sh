#!/usr/bin/env bash
# predict_device.sh [CJSON_DIR] - the inference measurements of docs/INFERENCE.md on the
# GPU machine, from the repository root: builds with CUDA (CJSON_DIR: where cJSON is
# when the machine lacks libcjson-dev, DIR/include/cjson/cJSON.h and DIR/lib/libcjson.so;
# without libprotobuf-c the build has no ONNX export and the onnxruntime rows are
# skipped), runs the predictor tests (predictor_cuda: the cuda predictor against the
# cpu reference, 1e-5), then bench/predict_vs_onnxruntime.py on 16 threads: the CPU
# rows and, with a GPU, ffnn's cuda rows at batch 1, 64 and 4096. Prints the tests'
# summary line and the markdown table.
set -euo pipefail
cjson=${1:-}
threads=${FFNN_BENCH_THREADS:-16}
make -j"$(nproc)" ${cjson:+CJSON_DIR="$cjson"} all build/ffnn_tests > build-device.log 2>&1 ||
    { tail -20 build-device.log; exit 1; }
grep -m1 "ffnn build:" build-device.log || true
build/ffnn_tests predictor_ onnx_
python=${FFNN_PYTHON:-python3}
"$python" -c "import numpy" 2>/dev/null ||
    { echo "predict_device: $python cannot import numpy: no benchmark table" >&2; exit 1; }
"$python" bench/predict_vs_onnxruntime.py --lib build/libffnn.so --threads "$threads" --markdown
