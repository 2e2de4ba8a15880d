#!/usr/bin/env python3
"""predict_vs_onnxruntime.py - ffnn's predictor against onnxruntime on the same
model, in one run (docs/INFERENCE.md has the tables this prints).

For each network (784-256relu-10 and 784-1024relu-1024relu-10, seeded random
weights, softmax head) the model is built through libffnn (ctypes), exported with
ffnn_model_export_onnx, and both run it from Python on the same float32 rows:
  ffnn  ffnn_predictor_create(model, device, threads, max_batch) then
        ffnn_predictor_predict (softmax probabilities, caller-owned outputs)
  ort   onnxruntime.InferenceSession(CPUExecutionProvider, intra_op_num_threads =
        threads, inter_op_num_threads = 1, sequential), session.run
The CPU rows at batch 1024 also time the trainer's forward pass on the same rows
(ffnn_trainer_evaluate over 4096 rows at eval_batch_size 1024, the same threads:
forward, loss and accuracy), the fastest forward the library had before the predictor.
Rows: batch 1024 throughput (rows/s: the median of 7 timed passes of
--seconds/7 each, after a warm-up) and batch 1 latency (median and p99 over
--calls single-row calls, each timed alone with perf_counter_ns, after a warm-up
of 0.2 s). Each measurement starts after 0.2 s idle, so that the runtime timed
before it (onnxruntime's threads spin a while after a run) holds no core. Both sides pay
one Python call per batch (ctypes for ffnn, the ORT binding for ort). The outputs
are compared first (max |ffnn - ort| printed; 1e-5 expected).
With a visible GPU (ffnn_cuda_device_count() > 0): ffnn's cuda predictor at batch
1, 64 and 4096 too (onnxruntime's CUDA provider when onnxruntime-gpu has it).

--base OTHER.so (a build to compare with, e.g. the tree before a change): the same
model made again through that library (same architecture and seed: the same
weights) adds "ffnn base" rows on the CPU, and the CPU rows are then timed
interleaved - short passes of ffnn, ffnn base and onnxruntime in rotating order
(--rounds of them; rows/s: each one's median pass; batch 1: all its calls pooled) -
so that a noisy machine's slow and fast spells fall on all three alike.

--hog N starts N processes that spin for the whole run: the machine busy with
other work, as a shared machine is (a predictor's threads then compete for cores).

usage: bench/predict_vs_onnxruntime.py [--lib build/libffnn.so] [--threads N]
           [--calls 10000] [--seconds 3] [--base OTHER.so [--rounds 15]] [--hog N]
           [--markdown]
Needs numpy; without onnxruntime the ort rows say so and ffnn's rows still run.
"""
import argparse
import ctypes as C
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import onnxruntime as ort
except ImportError:
    ort = None

NETS = ["784-256relu-10", "784-1024relu-1024relu-10"]
DEVICE_CPU, DEVICE_CUDA = 1, 2
LOSS_CE = 0


def load(path):
    lib = C.CDLL(path)
    p, i, sz = C.c_void_p, C.c_int, C.c_size_t
    sigs = {
        "ffnn_model_create": (i, [C.c_char_p, C.POINTER(p)]),
        "ffnn_model_init": (i, [p, C.c_uint64]),
        "ffnn_model_set_loss": (i, [p, i]),
        "ffnn_model_free": (None, [p]),
        "ffnn_model_export_onnx": (i, [p, C.c_char_p]),
        "ffnn_predictor_create": (i, [p, i, i, sz, C.POINTER(p)]),
        "ffnn_predictor_predict": (i, [p, p, sz, p, p]),
        "ffnn_predictor_free": (None, [p]),
        "ffnn_cuda_device_count": (i, []),
        "ffnn_last_error": (C.c_char_p, []),
        "ffnn_version": (C.c_char_p, [p, p, p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


def check(lib, status, what):
    if status != 0:
        sys.exit(f"{what}: {lib.ffnn_last_error().decode()}")


class Ffnn:
    """One predictor; predict(x) -> probabilities [rows, out] (preallocated)."""

    def __init__(self, lib, model, device, threads, max_batch, out):
        self.lib, self.p = lib, C.c_void_p()
        check(lib, lib.ffnn_predictor_create(model, device, threads, max_batch,
                                             C.byref(self.p)), "ffnn_predictor_create")
        self.y = np.empty((max_batch, out), np.float32)
        self.yp = self.y.ctypes.data

    def predict(self, x):
        self.lib.ffnn_predictor_predict(self.p, x.ctypes.data, x.shape[0], self.yp, None)
        return self.y[: x.shape[0]]

    def free(self):
        self.lib.ffnn_predictor_free(self.p)


class TrainerForward:
    """ffnn_trainer_evaluate on rows x (a data set of its own): the trainer's forward."""

    def __init__(self, lib_path, model_arch, x, threads):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "python"))
        os.environ.setdefault("FFNN_LIBRARY", os.path.abspath(lib_path))
        from ffnn import _lib as L  # the module's ctypes bindings and config mirror
        self.L, self.rows = L, x.shape[0]
        y = (np.arange(self.rows) % 10).astype(np.int32)  # every class present
        self.ds, self.m, self.t = C.c_void_p(), C.c_void_p(), C.c_void_p()
        L.check(L.lib.ffnn_dataset_from_arrays(self.rows, x.shape[1], x.ctypes.data_as(L._pf),
                                               y.ctypes.data_as(L._pi32), 0, None,
                                               C.byref(self.ds)))
        L.check(L.lib.ffnn_model_create(model_arch.encode(), C.byref(self.m)))
        L.check(L.lib.ffnn_model_init(self.m, 1))
        cfg = L.lib.ffnn_train_config_default()
        cfg.device, cfg.threads, cfg.eval_batch_size = DEVICE_CPU, threads, 1024
        L.check(L.lib.ffnn_trainer_create(self.m, self.ds, C.byref(cfg), C.byref(self.t)))
        self.loss, self.acc = C.c_double(), C.c_double()

    def predict(self, _x):
        self.L.lib.ffnn_trainer_evaluate(self.t, self.ds, C.byref(self.loss), C.byref(self.acc))

    def free(self):
        self.L.lib.ffnn_trainer_free(self.t)
        self.L.lib.ffnn_model_free(self.m)
        self.L.lib.ffnn_dataset_free(self.ds)


class Ort:
    def __init__(self, path, threads, provider):
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.s = ort.InferenceSession(path, o, providers=[provider])

    def predict(self, x):
        return self.s.run(["y"], {"x": x})[0]


SETTLE_S = 0.2  # idle before each measurement: the last runtime's spinning threads quiet


def throughput(run, x, seconds):
    """rows/s: the median of 7 passes of about seconds/7 each (after SETTLE_S idle
    and a warm-up)."""
    time.sleep(SETTLE_S)
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < min(0.3, seconds / 7):
        run(x)
        n += 1
    reps = max(1, int(n * (seconds / 7) / max(time.perf_counter() - t0, 1e-9)))
    rates = []
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(reps):
            run(x)
        rates.append(reps * x.shape[0] / (time.perf_counter() - t))
    return statistics.median(rates)


def latency(run, x, calls):
    """(median, p99) microseconds of single calls (after SETTLE_S idle and a warm-up
    of 200 calls and 0.2 s)."""
    time.sleep(SETTLE_S)
    t0, n = time.perf_counter(), 0
    while n < min(200, calls) or time.perf_counter() - t0 < 0.2:
        run(x)
        n += 1
    ts = []
    for _ in range(calls):
        t = time.perf_counter_ns()
        run(x)
        ts.append(time.perf_counter_ns() - t)
    ts.sort()
    return ts[len(ts) // 2] / 1e3, ts[min(len(ts) - 1, int(0.99 * len(ts)))] / 1e3


def interleaved(runners, x, seconds, calls, rounds):
    """[(rows/s or None, median us, p99 us)] per runner: rounds of one short pass each
    (seconds / rounds in all per runner; at batch 1, calls / rounds single calls), the
    order rotated every round; each pass after SETTLE_S idle and 20 untimed calls."""
    batch1 = x.shape[0] == 1
    for run in runners:  # warm-up
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.2:
            run(x)
    rates, ts = [[] for _ in runners], [[] for _ in runners]
    for r in range(rounds):
        for i in [(r + k) % len(runners) for k in range(len(runners))]:
            time.sleep(SETTLE_S)
            for _ in range(20):
                runners[i](x)
            if batch1:
                for _ in range(max(1, calls // rounds)):
                    t = time.perf_counter_ns()
                    runners[i](x)
                    ts[i].append(time.perf_counter_ns() - t)
                continue
            t0, n = time.perf_counter(), 0
            while time.perf_counter() - t0 < seconds / rounds:
                runners[i](x)
                n += 1
            rates[i].append(n * x.shape[0] / (time.perf_counter() - t0))
    if not batch1:
        return [(statistics.median(v), None, None) for v in rates]
    out = []
    for v in ts:
        v.sort()
        out.append((None, v[len(v) // 2] / 1e3, v[min(len(v) - 1, int(0.99 * len(v)))] / 1e3))
    return out


def make_model(lib, net):
    m = C.c_void_p()
    check(lib, lib.ffnn_model_create(net.encode(), C.byref(m)), net)
    check(lib, lib.ffnn_model_init(m, 1), "init")
    check(lib, lib.ffnn_model_set_loss(m, LOSS_CE), "loss")
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default="build/libffnn.so")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--base", help="a second libffnn.so: 'ffnn base' rows, timed interleaved")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved passes (--base)")
    ap.add_argument("--markdown", action="store_true", help="rows as a markdown table")
    ap.add_argument("--hog", type=int, default=0,
                    help="N processes that spin beside the timed runs (a busy machine)")
    a = ap.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(a.hog)]
    try:
        run(a)
    finally:
        for h in hogs:
            h.kill()


def run(a):
    """The benchmark itself, on main's parsed arguments."""
    lib = load(a.lib)
    base = load(a.base) if a.base else None
    gpus = lib.ffnn_cuda_device_count()
    print(f"# {platform.node()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus, {a.threads} threads; ffnn "
          f"{lib.ffnn_version(None, None, None).decode()}, onnxruntime "
          f"{ort.__version__ if ort else 'absent'}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT', '(unset)')} "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}; "
          f"{a.hog} spinning processes beside (--hog)")
    rows = []
    rng = np.random.default_rng(1)
    tmp = tempfile.mkdtemp(prefix="ffnn-bench-")
    for net in NETS:
        m = make_model(lib, net)
        mb = make_model(base, net) if base else None
        path = os.path.join(tmp, net + ".onnx")
        exported = lib.ffnn_model_export_onnx(m, path.encode()) == 0
        if not exported:  # e.g. a build without protobuf-c: ffnn's rows only
            print(f"# {net}: no ONNX export ({lib.ffnn_last_error().decode()}); "
                  "onnxruntime rows skipped")
        big = rng.random((4096, 784), dtype=np.float32)
        plans = [("cpu", DEVICE_CPU, "CPUExecutionProvider", [1024, 1])]
        if gpus > 0:
            plans.append(("cuda", DEVICE_CUDA, "CUDAExecutionProvider", [4096, 64, 1]))
        for dev, code, provider, batches in plans:
            f = Ffnn(lib, m, code, a.threads if code == DEVICE_CPU else 0, max(batches), 10)
            o = None
            if exported and ort and provider in ort.get_available_providers():
                o = Ort(path, a.threads, provider)
                diff = float(np.abs(f.predict(big[:1024]) - o.predict(big[:1024])).max())
                print(f"# {net} {dev}: max |ffnn - ort| = {diff:.2g} on 1024 rows")
            fb = Ffnn(base, mb, code, a.threads, max(batches), 10) if base and code == DEVICE_CPU \
                else None
            for b in batches:
                x = np.ascontiguousarray(big[:b])
                if fb:  # interleaved: ffnn, ffnn base and onnxruntime alike
                    named = [(n, r) for n, r in (("ffnn", f), ("ffnn base", fb),
                                                 ("onnxruntime", o)) if r]
                    got = interleaved([r.predict for _, r in named], x, a.seconds, a.calls,
                                      a.rounds)
                    rows += [(net, dev, b, n) + g for (n, _), g in zip(named, got)]
                    continue
                for name, runner in (("ffnn", f), ("onnxruntime", o)):
                    if runner is None:
                        rows.append((net, dev, b, name, None, None, None))
                        continue
                    if b == 1:
                        med, p99 = latency(runner.predict, x, a.calls)
                        rows.append((net, dev, b, name, None, med, p99))
                    else:
                        rows.append((net, dev, b, name, throughput(runner.predict, x, a.seconds),
                                     None, None))
            if code == DEVICE_CPU:  # the trainer's forward on the same rows, same threads
                tf = TrainerForward(a.lib, net, np.ascontiguousarray(big), a.threads)
                rows.append((net, dev, 1024, "ffnn trainer forward",
                             throughput(lambda _x: tf.predict(_x), big, a.seconds), None, None))
                tf.free()
            f.free()
            if fb:
                fb.free()
        lib.ffnn_model_free(m)
        if mb:
            base.ffnn_model_free(mb)
    head = ("network", "device", "batch", "runtime", "rows/s", "median us", "p99 us")
    fmt = (lambda r: "| " + " | ".join(r) + " |") if a.markdown else (
        lambda r: "  ".join(f"{c:>24}" if i == 0 else f"{c:>11}" for i, c in enumerate(r)))
    print(fmt(head))
    if a.markdown:
        print("|" + "---|" * len(head))
    for net, dev, b, name, tput, med, p99 in rows:
        absent = tput is None and med is None
        print(fmt((net, dev, str(b), name,
                   "absent" if absent else (f"{tput:,.0f}" if tput else "-"),
                   f"{med:.1f}" if med else "-", f"{p99:.1f}" if p99 else "-")))


if __name__ == "__main__":
    main()
