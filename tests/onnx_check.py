"""onnx_check.py - run by tests/test_onnx.c: for each PREFIX, PREFIX.onnx (an ffnn
export) must pass onnx.checker (full_check: shapes inferred), and onnxruntime (CPU
execution provider) runs it on PREFIX.x (float32 rows, raw little-endian) into
PREFIX.y (float32, raw). PREFIX.meta, when present, holds "key=value" lines that
must equal the model's metadata_props. Exit 0, or 1 with the reason on stderr;
exit 3 when onnx or onnxruntime cannot be imported (the C test skips)."""
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
except ImportError as e:  # the test skips, naming it
    print(f"cannot import {e.name}", file=sys.stderr)
    sys.exit(3)


def check(prefix):
    model = onnx.load(prefix + ".onnx")
    onnx.checker.check_model(model, full_check=True)
    opsets = {o.domain: o.version for o in model.opset_import}
    if opsets.get("", None) != 17:
        raise SystemExit(f"{prefix}.onnx: opset {opsets}, expected 17")
    try:
        with open(prefix + ".meta") as f:
            want = dict(line.rstrip("\n").split("=", 1) for line in f if line.strip())
    except FileNotFoundError:
        want = {}
    have = {p.key: p.value for p in model.metadata_props}
    for k, v in want.items():
        if have.get(k) != v:
            raise SystemExit(f"{prefix}.onnx: metadata {k} = {have.get(k)!r}, expected {v!r}")
    width = model.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    x = np.fromfile(prefix + ".x", dtype="<f4").reshape(-1, width)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    s = ort.InferenceSession(prefix + ".onnx", opts, providers=["CPUExecutionProvider"])
    (y,) = s.run(["y"], {"x": x})
    y.astype("<f4").tofile(prefix + ".y")


for p in sys.argv[1:]:
    check(p)
