#!/usr/bin/python3
"""safetensors_interop.py - the Python side of ffnn's model-file interop test
(tests/test_safetensors.c, test safetensors_pytorch_interop).

usage: safetensors_interop.py DIR

(a) ffnn -> PyTorch: reads DIR/ffnn.safetensors (written by ffnn), DIR/inputs.f32
    (x [4, 6], float32 little-endian) and DIR/ffnn_out.f32 (ffnn's forward on x);
    loads the file with the 10-line numpy reader of docs/PYTHON.md (and with
    safetensors.torch.load_file too when the safetensors package is installed),
    builds torch.nn.Linear layers from it and checks torch's output = ffnn's
    to 1e-5.
(b) PyTorch -> ffnn: writes DIR/torch.safetensors, the state_dict of a seeded
    nn.Sequential (arch 6-5tanh:nobias-4relu-3) with its keys renamed to
    layers.{i}.weight / .bias, through a numpy writer (tensors sorted by name, as
    the safetensors package does), and DIR/torch_out.f32, torch's output on x.
    The C test then loads it into ffnn and compares.

Exit status: 0 pass, 1 fail (message on stderr), 77 skip (numpy or torch cannot
be imported; the reason in DIR/skip_reason.txt).
"""
import json
import os
import re
import struct
import sys


def load_safetensors(path):
    """docs/PYTHON.md's numpy reader: {name: float32 array}, metadata."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {name: np.frombuffer(data[t["data_offsets"][0]:t["data_offsets"][1]],
                                   dtype="<f4").reshape(t["shape"])
               for name, t in header.items()}
    return tensors, meta


def save_safetensors(path, tensors, meta):
    """docs/PYTHON.md's numpy writer: F32 tensors in name order, metadata strings."""
    header, blobs, offset = {"__metadata__": meta}, [], 0
    for name, array in sorted(tensors.items()):
        b = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def build_torch(arch, tensors):
    """An nn.Sequential for an ffnn architecture string, with its weights."""
    acts = {"relu": torch.nn.ReLU, "sigmoid": torch.nn.Sigmoid, "tanh": torch.nn.Tanh}
    tokens = arch.split("-")
    fan_in, layers = int(tokens[0]), []
    for i, token in enumerate(tokens[1:]):
        width, act, nobias = re.fullmatch(r"(\d+)([a-z]*)(:nobias)?", token).groups()
        linear = torch.nn.Linear(fan_in, int(width), bias=not nobias)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(tensors[f"layers.{i}.weight"].copy()))
            if not nobias:
                linear.bias.copy_(torch.from_numpy(tensors[f"layers.{i}.bias"].copy()))
        layers.append(linear)
        if act and act != "identity":
            layers.append(acts[act]())
        fan_in = int(width)
    return torch.nn.Sequential(*layers)


def read_f32(path, shape):
    return np.fromfile(path, dtype="<f4").reshape(shape)


def fail(message):
    print(f"safetensors_interop.py: {message}", file=sys.stderr)
    sys.exit(1)


def check_ffnn_file(d):
    """(a): ffnn's file in numpy and torch gives ffnn's outputs."""
    tensors, meta = load_safetensors(os.path.join(d, "ffnn.safetensors"))
    if meta.get("format") != "ffnn-model" or "arch" not in meta:
        fail(f"unexpected metadata {meta}")
    x = torch.from_numpy(read_f32(os.path.join(d, "inputs.f32"), (4, 6)).copy())
    want = read_f32(os.path.join(d, "ffnn_out.f32"), (4, -1))
    with torch.no_grad():
        got = build_torch(meta["arch"], tensors)(x).numpy()
    err = float(np.max(np.abs(got - want)))
    if err > 1e-5:
        fail(f"torch on ffnn's file differs from ffnn by {err:g}:\n{got}\n{want}")
    try:
        from safetensors.torch import load_file
    except ImportError:
        return
    for name, t in load_file(os.path.join(d, "ffnn.safetensors")).items():
        if not np.array_equal(t.numpy(), tensors[name]):
            fail(f"safetensors.torch.load_file disagrees with the numpy reader on {name}")


def write_torch_file(d):
    """(b): a torch state_dict with renamed keys, and torch's outputs."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5, bias=False), torch.nn.Tanh(),
                                torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    # nn.Sequential names them 0, 2, 4: ffnn wants layers.0, layers.1, layers.2
    tensors = {f"layers.{i}.{k}": v.detach().numpy()
               for i, m in enumerate(linears) for k, v in m.state_dict().items()}
    meta = {"format": "ffnn-model", "arch": "6-5tanh:nobias-4relu-3", "loss": "ce"}
    save_safetensors(os.path.join(d, "torch.safetensors"), tensors, meta)
    x = torch.from_numpy(read_f32(os.path.join(d, "inputs.f32"), (4, 6)).copy())
    with torch.no_grad():
        model(x).numpy().astype("<f4").tofile(os.path.join(d, "torch_out.f32"))


def main():
    if len(sys.argv) != 2:
        fail("usage: safetensors_interop.py DIR")
    d = sys.argv[1]
    global np, torch
    try:
        import numpy as np
        import torch
    except ImportError as e:
        with open(os.path.join(d, "skip_reason.txt"), "w") as f:
            f.write(f"cannot import numpy/torch ({e})\n")
        sys.exit(77)
    check_ffnn_file(d)
    write_torch_file(d)


if __name__ == "__main__":
    main()
