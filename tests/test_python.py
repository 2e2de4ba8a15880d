#!/usr/bin/python3
"""test_python.py LIBFFNN - the Python module (python/ffnn) over the libffnn.so at
LIBFFNN, with /usr/bin/python3 and Debian's numpy (run by make test through
tests/test_install.c). Exit status 0: passed; 77: numpy missing; else failed.

Checks: the version; training on in-memory arrays learns (circle data, >= 90%);
early stopping stops after the patience and keeps the best epoch's weights;
predictions equal the C library's (the CLI's ffnn predict on the saved model);
save/load round trip bit for bit; the weight views share the model's memory; the
library's errors arrive as exceptions with its message; the library is found
from a build tree without FFNN_LIBRARY; the Python sessions of the README and
docs/PYTHON.md run as shown (doctests). The scikit-learn estimators, pickling, the
options and the wheel are tests/python/ (pytest; the runner's python_pytest case).
"""
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit(77)

LIB = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["FFNN_LIBRARY"] = LIB
sys.path.insert(0, os.path.join(ROOT, "python"))
import ffnn  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("    FAIL: " + what, file=sys.stderr)


def circle(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    return X, ((X ** 2).sum(axis=1) < 0.5).astype(np.int64)


def header_version():
    parts = {}
    with open(os.path.join(ROOT, "include", "ffnn.h")) as f:
        for line in f:
            for k in ("MAJOR", "MINOR", "PATCH"):
                if line.startswith("#define FFNN_VERSION_%s " % k):
                    parts[k] = line.split()[2]
    return "%s.%s.%s" % (parts["MAJOR"], parts["MINOR"], parts["PATCH"])


tmp = tempfile.mkdtemp(prefix="ffnn-python-")
try:
    check(ffnn.version() == header_version() == ffnn.__version__,
          "version %s, header %s" % (ffnn.version(), header_version()))
    check(os.path.samefile(ffnn.library_path, LIB), "loaded %s" % ffnn.library_path)

    # training on arrays: ffnn.train, evaluate, predict
    X, y = circle(2000, 0)
    Xt, yt = circle(500, 1)
    model = ffnn.train(X, y, arch="2-16tanh-16tanh-2", optimizer="adam", learning_rate=0.01,
                       batch_size=32, epochs=30, validation_data=(Xt, yt))
    check(len(model.history) == 30 and "val_accuracy" in model.history[-1], "history")
    ev = model.evaluate(Xt, yt)
    check(ev["accuracy"] >= 0.9, "circle test accuracy %.3f < 0.9" % ev["accuracy"])
    check(abs(ev["accuracy"] - model.history[-1]["val_accuracy"]) < 0.01,
          "evaluate %.4f vs the trainer's %.4f" % (ev["accuracy"],
                                                   model.history[-1]["val_accuracy"]))
    check(model.best_epoch is None, "best_epoch without early stopping")
    p = model.predict(Xt)
    check(p.shape == (500, 2) and p.dtype == np.float32, "predict shape %s %s" % (p.shape, p.dtype))

    # early stopping: random labels, so the validation loss soon rises; the run stops
    # 4 epochs after its lowest, whose weights the model keeps (its loss on the
    # validation set, evaluated by the host, is that epoch's, as the trainer saw it)
    rng = np.random.default_rng(5)
    Xn = rng.uniform(-1, 1, (400, 2)).astype(np.float32)
    yn = rng.integers(0, 2, 400)
    noisy = ffnn.Model("2-64relu-2", seed=3)
    hist = noisy.train(Xn[:200], yn[:200], optimizer="adam", learning_rate=0.02, epochs=300,
                       batch_size=16, validation_data=(Xn[200:], yn[200:]), early_stopping=4,
                       device="cpu")
    losses = [r["val_loss"] for r in hist]
    best = int(np.argmin(losses)) + 1
    check(len(hist) < 300 and len(hist) == best + 4 and noisy.best_epoch is not None and
          noisy.best_epoch["epoch"] == best and noisy.best_epoch["loss"] == losses[best - 1],
          "early stopping: %d epochs, best %s, the lowest val_loss at %d"
          % (len(hist), noisy.best_epoch, best))
    kept = noisy.evaluate(Xn[200:], yn[200:])["loss"]
    check(abs(kept - losses[best - 1]) <= 1e-5 * abs(losses[best - 1]),
          "the kept weights' val_loss %.9g, the best epoch's %.9g" % (kept, losses[best - 1]))
    check(np.allclose(p.sum(axis=1), 1, atol=1e-5), "softmax rows do not sum to 1")
    check((model.predict_classes(Xt) == p.argmax(axis=1)).all(), "predict_classes != argmax")
    # float64 and non-contiguous inputs are converted, same answer
    check(np.array_equal(model.predict(Xt.astype(np.float64)[:, ::1]), p), "float64 input")
    check(np.array_equal(model.predict(np.asfortranarray(Xt)), p), "Fortran-order input")

    # save / load: bit for bit; the CLI reads the same file and predicts the same
    path = os.path.join(tmp, "circle.safetensors")
    model.save(path)
    loaded = ffnn.load(path)
    check(loaded.arch == "2-16tanh-16tanh-2" and loaded.loss == "ce", "loaded " + repr(loaded))
    check(np.array_equal(loaded.parameters(), model.parameters()), "parameters differ after load")
    check(np.array_equal(loaded.predict(Xt), p), "predictions differ after load")
    cli = os.path.join(os.path.dirname(LIB), "ffnn")
    if os.access(cli, os.X_OK):
        csv = os.path.join(tmp, "x.csv")
        np.savetxt(csv, Xt[:20], delimiter=",", fmt="%.9g")
        out = subprocess.run([cli, "predict", "--model", path, "--input", csv],
                             capture_output=True, text=True, check=True).stdout
        rows = np.array([[float(v) for v in line.split(",")] for line in out.split()])
        check(np.array_equal(rows[:, 0].astype(int), p[:20].argmax(axis=1)),
              "ffnn predict classes differ")
        check(np.allclose(rows[:, 1:], p[:20], rtol=1e-5, atol=1e-6), "ffnn predict values")

    # zero-copy views: writing a weight changes the model's predictions
    w = loaded.weights()
    check(w[0].shape == (16, 2) and np.shares_memory(w[0], loaded.parameters()), "weight view")
    check(loaded.biases()[2].shape == (2,), "bias view shape")
    w[2][:] = 0
    loaded.biases()[2][:] = [0.0, 1.0]
    check((loaded.predict_classes(Xt) == 1).all(), "writing the views did not change the model")
    del loaded
    check(w[0].sum() == w[0].sum(), "a view outlives its model")  # still readable

    # errors: the library's message, as exceptions of the right kind
    try:
        ffnn.Model("2-16rellu-2")
        check(False, "bad arch accepted")
    except ffnn.FfnnValueError as e:
        check("column 3" in str(e) and e.status == "parse error", "arch error: %s" % e)
    bad = X.copy()
    bad[7, 1] = np.nan
    try:
        ffnn.train(bad, y, arch="2-4relu-2", epochs=1)
        check(False, "NaN accepted")
    except ValueError as e:
        check("7" in str(e), "NaN error names no sample: %s" % e)
    try:
        model.predict(np.zeros((3, 5), np.float32))
        check(False, "wrong width accepted")
    except ValueError as e:
        check("5 features" in str(e), "width error: %s" % e)
    try:
        ffnn.load(os.path.join(tmp, "missing.safetensors"))
        check(False, "missing file accepted")
    except OSError as e:
        check("missing.safetensors" in str(e), "load error: %s" % e)
    try:
        model.train(X, y, epochs=1, batch_size=0)
        check(False, "batch_size 0 accepted")
    except ffnn.FfnnError as e:
        check("batch" in str(e), "batch error: %s" % e)
    # no silent wrong task (docs/TRAINING.md "Task checks"): one class is refused by
    # the library's trainer, so Model.train inherits it
    try:
        model.train(X, np.zeros(len(X), dtype=np.int32), epochs=1)
        check(False, "one class accepted")
    except ffnn.FfnnValueError as e:
        check("at least 2 classes" in str(e), "one-class error: %s" % e)

    # the scikit-learn estimators: tests/python/test_estimators.py (pytest, run by the
    # runner's python_pytest case)

    # the Python sessions of the README's quick start and of docs/PYTHON.md, each run
    # as one doctest (in a scratch directory)
    import doctest
    import re
    for doc, least in (("README.md", 5), (os.path.join("docs", "PYTHON.md"), 10)):
        with open(os.path.join(ROOT, doc)) as f:
            blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
        session = "".join(b for b in blocks if b.lstrip().startswith(">>>"))
        check(session.count(">>>") >= least, "%s has no Python session" % doc)
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            test = doctest.DocTestParser().get_doctest(session, {}, doc, doc, 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
            runner.run(test)
            check(runner.failures == 0,
                  "%s's Python session: %d failure(s)" % (doc, runner.failures))
        finally:
            os.chdir(cwd)

    # found from a build tree (python/ffnn -> build/libffnn.so.MAJOR), no FFNN_LIBRARY
    tree = os.path.join(tmp, "tree")
    shutil.copytree(os.path.join(ROOT, "python", "ffnn"), os.path.join(tree, "python", "ffnn"))
    os.makedirs(os.path.join(tree, "build"))
    os.symlink(os.path.realpath(LIB), os.path.join(tree, "build", "libffnn.so.0"))
    env = {k: v for k, v in os.environ.items() if k != "FFNN_LIBRARY"}
    env["PYTHONPATH"] = os.path.join(tree, "python")
    r = subprocess.run([sys.executable, "-c", "import ffnn; print(ffnn.library_path)"],
                       env=env, capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.strip().endswith("build/libffnn.so.0"),
          "build tree lookup: %s %s" % (r.stdout, r.stderr))

    # the wheel (pip install ./python, a fresh venv): tests/python/test_packaging.py
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("test_python.py: %d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("test_python.py: all checks passed (libffnn %s at %s)" % (ffnn.version(), LIB))
