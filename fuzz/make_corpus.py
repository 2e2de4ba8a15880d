#!/usr/bin/env python3
"""make_corpus.py - (re)generate the seed corpora of the fuzz targets (fuzz/*.c):

  fuzz/corpus/model/       valid model files (several architectures and losses) and
                           the regression inputs of the hardening review's findings
  fuzz/corpus/checkpoint/  the regression inputs (the valid seeds *.ck are written
                           by ffnn train and kept as committed)
  fuzz/corpus/idx/         raw IDX image and label files; the gz target compresses
                           them itself; a forged 33-byte .gz header
  fuzz/corpus/arch/        architecture strings, long and short, valid and not
  fuzz/corpus/csv/         CSV inputs of ffnn predict (first byte: the row width)
  fuzz/corpus/strtof/      decimal texts for the number parser against strtof: short,
                           long mantissas, float32 midpoints, subnormals, FLT_MAX's edge
  fuzz/corpus/info/        model files for ffnn info --json's object (info_json): the
                           valid models and strings that JSON or a terminal would
                           misread (quotes, controls, C1, non-ASCII class names)

Every finding of a fuzz run is added by hand as regress-<what> to its corpus.
Run from the repository root:  python3 fuzz/make_corpus.py
Only the standard library is used (struct, json, gzip)."""
import gzip
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(kind, name, data):
    d = os.path.join(ROOT, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def safetensors(header, data=b"", raw_header=None):
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":"))
    text = text.encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def model_file(arch_layers, inputs, loss, arch=None, extra_meta=None):
    """arch_layers: [(out, act, bias)] dense layers."""
    names, header, data = [], {}, b""
    fan_in = inputs
    parts = [str(inputs)]
    for i, (out, act, bias) in enumerate(arch_layers):
        parts.append(f"{out}{act}{'' if bias else ':nobias'}")
        w = struct.pack(f"<{out * fan_in}f", *[((k * 7) % 11 - 5) / 10 for k in range(out * fan_in)])
        header[f"layers.{i}.weight"] = {"dtype": "F32", "shape": [out, fan_in],
                                        "data_offsets": [len(data), len(data) + len(w)]}
        data += w
        if bias:
            b = struct.pack(f"<{out}f", *[0.1 * k for k in range(out)])
            header[f"layers.{i}.bias"] = {"dtype": "F32", "shape": [out],
                                          "data_offsets": [len(data), len(data) + len(b)]}
            data += b
        fan_in = out
    meta = {"format": "ffnn-model", "arch": arch or "-".join(parts), "loss": loss,
            "ffnn_version": "0.1.0"}
    meta.update(extra_meta or {})
    header = {"__metadata__": meta, **header}
    return safetensors(header, data)


def ensemble_file(members, inputs, loss):
    """members: [arch_layers] of model_file, as one ffnn-ensemble file (docs/FORMATS.md)."""
    header, data = {}, b""
    meta = {"format": "ffnn-ensemble", "loss": loss, "ffnn_version": "0.1.0",
            "members": str(len(members))}
    for m, layers in enumerate(members):
        fan_in, parts = inputs, [str(inputs)]
        for i, (out, act, bias) in enumerate(layers):
            parts.append(f"{out}{act}{'' if bias else ':nobias'}")
            for name, n in (("weight", out * fan_in), ("bias", out if bias else 0)):
                if not n:
                    continue
                v = struct.pack(f"<{n}f", *[((k * 5 + m) % 9 - 4) / 10 for k in range(n)])
                header[f"members.{m}.layers.{i}.{name}"] = {
                    "dtype": "F32", "shape": [out, fan_in] if name == "weight" else [out],
                    "data_offsets": [len(data), len(data) + len(v)]}
                data += v
            fan_in = out
        meta[f"member.{m}.arch"] = "-".join(parts)
    return safetensors({"__metadata__": meta, **header}, data)


def models():
    put("model", "ensemble_2x_3-4relu-2", ensemble_file(
        [[(4, "relu", 1), (2, "", 1)], [(5, "tanh", 0), (2, "", 1)]], 3, "ce"))
    put("model", "ce_3-4relu-2", model_file([(4, "relu", 1), (2, "", 1)], 3, "ce"))
    put("model", "bce_2-8tanh-1", model_file([(8, "tanh", 1), (1, "", 1)], 2, "bce"))
    put("model", "mse_4-3sigmoid-2nobias", model_file([(3, "sigmoid", 1), (2, "", 0)], 4, "mse"))
    put("model", "interrupted_2-2", model_file([(2, "", 1)], 2, "ce",
                                               extra_meta={"interrupted": "SIGINT at epoch 1"}))
    # the hardening review's findings, as regression inputs
    put("model", "regress-arch-2pow36", model_file([(1, "", 1)], 2, "mse", arch="65536-1048000"))
    put("model", "regress-bce-sigmoid-last", model_file([(1, "sigmoid", 1)], 2, "bce"))
    tiny = struct.pack("<3f", 1, 2, 3)
    put("model", "regress-key-nul", safetensors(None, tiny, raw_header=(
        '{"__metadata__":{"format":"ffnn-model","arch":"2-1","loss":"mse"},'
        '"layers.0.weight":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},'
        '"layers.0.bias\\u0000x":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}')))
    put("model", "regress-escape-key", safetensors(None, tiny, raw_header=(
        '{"__metadata__":{"format":"ffnn-model","arch":"2-1","loss":"mse",'
        '"\\u001b[2J":"x"},'
        '"layers.0.weight":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},'
        '"layers.0.bias":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}')))
    long_arch = "2" + "-8tanh" * 120 + "-2"
    put("arch", "regress-long-725", long_arch.encode())


def info():
    put("info", "ce_3-4relu-2", model_file([(4, "relu", 1), (2, "", 1)], 3, "ce"))
    put("info", "bce_2-8tanh-1", model_file([(8, "tanh", 1), (1, "", 1)], 2, "bce",
                                            extra_meta={"class_names": '["no", "y\\u00e9s"]'}))
    put("info", "regress-version-json", model_file(
        [(8, "tanh", 1), (2, "", 1)], 2, "ce",
        extra_meta={"ffnn_version": '0.1", "parameters": 999999999, "loss": "mse',
                    "interrupted": "SIGINT \x1b[2J\u009b1m\x7f at epoch 1"}))


def checkpoints():
    meta = {"format": "ffnn-checkpoint", "arch": "65536-1048000", "loss": "mse",
            "optimizer": "sgd", "learning_rate": "0.01", "batch_size": "1", "seed": "1",
            "shuffle": "true", "epochs": "1", "train_count": "1", "train_crc32": "0",
            "epoch": "0", "step": "0", "steps_per_epoch": "1", "optimizer_steps": "0",
            "shuffle_rng": "1,2,3,4"}
    header = {"__metadata__": meta,
              "train.step_losses": {"dtype": "F64", "shape": [0], "data_offsets": [0, 0]},
              "layers.0.weight": {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]},
              "layers.0.bias": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}
    put("checkpoint", "regress-arch-2pow36", safetensors(header, struct.pack("<3f", 1, 2, 3)))
    meta = dict(meta, arch="2" + "-8tanh" * 30 + "-2")
    put("checkpoint", "regress-long-arch-truncated",
        safetensors({"__metadata__": dict(meta, arch=meta["arch"][:160])}))


def idx():
    img = bytes([0, 0, 8, 3]) + struct.pack(">III", 3, 2, 2) + bytes(range(12))
    lbl = bytes([0, 0, 8, 1]) + struct.pack(">I", 3) + bytes([0, 1, 2])
    put("idx", "images_3x2x2", img)
    put("idx", "labels_3", lbl)
    put("idx", "images_3x2x2.gz", gzip.compress(img))
    put("idx", "truncated", img[:-3])
    put("idx", "trailing", lbl + b"\x00")
    # a finding: a 33-byte gzip file whose header promises 65535 images of 256 x 256
    put("idx", "regress-gz-forged-4gib",
        gzip.compress(bytes([0, 0, 8, 3]) + struct.pack(">III", 65535, 256, 256), mtime=0))
    bad = bytearray(gzip.compress(img, mtime=0))
    bad[12] ^= 0xFF
    put("idx", "regress-gz-corrupt", bytes(bad))


def arch():
    for name, text in [("dense", "784-256relu-10"), ("local", "64-local5samerelu-local3sigmoid-2"),
                       ("nobias", "3-4tanh:nobias-1"), ("bad-empty-token", "3--2"),
                       ("bad-even-same", "8-local4same-2"), ("huge", "65536-1048576-2"),
                       ("identity", "2-3identity-2"), ("embed", "5-embed7x3_4x2-8relu-2"),
                       ("regress-embed-tables", "74-embed5x2")]:
        put("arch", name, text.encode())


def csv():
    for name, width, text in [("two", 2, "1,2\n3,4\n"), ("bom-crlf", 3, "\ufeff1,2,3\r\n4,5,6\r\n"),
                              ("blank-lines", 1, "\n1\n\n2\n"), ("ragged", 2, "1,2\n3\n"),
                              ("nan", 2, "nan,1\n"), ("huge", 2, "1e999,1\n"),
                              ("regress-empty", 2, ""), ("regress-escape", 2, "1,\x1b[31mX\n")]:
        put("csv", name, bytes([width - 1]) + text.encode())


def strtof():
    for name, text in [("short", "-0.1234"), ("int", "42"), ("exp", "1.5E+05"),
                       ("point", ".5"), ("trailing-point", "5."), ("long", "3.14159265358979323846264"),
                       ("mid", "16777217"), ("mid-frac", "1.00000005960464477539062"),
                       ("subnormal", "1.4e-45"), ("min", "1.17549435e-38"),
                       ("max", "3.40282347e38"), ("over", "3.4028236e38"),
                       ("zeros", "0.000000000000000000000000001"), ("neg-zero", "-0e999"),
                       ("bad", "1e+"), ("nan", "nan")]:
        put("strtof", name, text.encode())


if __name__ == "__main__":
    models()
    info()
    checkpoints()
    idx()
    arch()
    csv()
    strtof()
    print("corpora written under", ROOT)
