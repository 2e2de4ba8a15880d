"""The package as users get it: a wheel (pip wheel ./python, the library it tests packed
by python/_build_libffnn.py's FFNN_WHEEL_LIBRARY) installed into a fresh venv works from
outside the source tree; `import ffnn` is quick and loads neither numpy nor libffnn (so
no CUDA library) until a name needs them."""
import os
import shutil
import subprocess
import sys
import time

import pytest

PYTHON = sys.executable


def _env_without_library():
    return {k: v for k, v in os.environ.items() if k not in ("FFNN_LIBRARY", "PYTHONPATH")}


def test_import_loads_nothing_until_used(root):
    code = ("import sys, time; t = time.perf_counter(); import ffnn; "
            "dt = time.perf_counter() - t; maps = open('/proc/self/maps').read(); "
            "print(dt, 'numpy' in sys.modules, 'libffnn' in maps, 'libcuda' in maps); "
            "ffnn.Model; maps = open('/proc/self/maps').read(); print('libffnn' in maps)")
    r = subprocess.run([PYTHON, "-c", code], env=dict(os.environ,
                                                      PYTHONPATH=os.path.join(root, "python")),
                       capture_output=True, text=True, check=True)
    first, second = r.stdout.split("\n")[:2]
    seconds, numpy, libffnn, cuda = first.split()
    print("import ffnn: %.4f s" % float(seconds))
    assert (numpy, libffnn, cuda, second) == ("False", "False", "False", "True")
    assert float(seconds) < 0.2


def test_wheel_in_a_fresh_venv(tmp_path, root, lib):
    try:
        import pip  # noqa: F401
        import setuptools  # noqa: F401
        import venv  # noqa: F401
    except ImportError as e:
        pytest.skip("%s (apt-get install python3-pip python3-setuptools python3-venv)" % e)
    source = tmp_path / "src"
    shutil.copytree(os.path.join(root, "python"), source / "python",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    env = dict(_env_without_library(), FFNN_WHEEL_LIBRARY=os.path.realpath(lib))
    wheels = tmp_path / "wheels"
    r = subprocess.run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                        "--no-index", "-w", str(wheels), str(source / "python")],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = os.listdir(wheels)
    assert wheel.startswith("ffnn-") and "linux" in wheel and wheel.endswith(".whl"), wheel
    venv_dir = tmp_path / "venv"
    r = subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(venv_dir)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("python -m venv failed (apt-get install python3-venv): " + r.stderr[-500:])
    vpython = str(venv_dir / "bin" / "python")
    if subprocess.run([vpython, "-c", "import numpy"], capture_output=True).returncode != 0:
        # e.g. PYTHON itself a venv: --system-site-packages then gives the base's
        pytest.skip("a fresh venv of %s sees no numpy (its system site-packages lack it)"
                    % PYTHON)
    subprocess.run([vpython, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    str(wheels / wheel)], check=True, env=_env_without_library())
    shutil.rmtree(source)  # nothing of the source is left to find
    code = ("import ffnn, numpy as np, warnings; warnings.simplefilter('ignore');"
            "X = np.random.default_rng(0).uniform(-1, 1, (300, 2));"
            "y = (X[:, 0] > 0).astype(int);"
            "clf = ffnn.MLPClassifier(max_iter=30, random_state=0).fit(X, y);"
            "print(ffnn.library_path); print(ffnn.version(), clf.score(X, y) > 0.9);"
            "print(ffnn.has_cuda())")
    t = time.perf_counter()
    r = subprocess.run([vpython, "-c", code], cwd=str(tmp_path), env=_env_without_library(),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    path, result, has_cuda = r.stdout.strip().split("\n")
    assert path.startswith(str(venv_dir)) and path.endswith("ffnn/libffnn.so.0"), path
    assert result.endswith("True"), result
    # the build's modules (docs/BUILD.md "The CUDA and MPI modules") beside it in the wheel
    built = os.path.dirname(os.path.realpath(lib))
    for name in ("libffnn-cuda.so", "libffnn-mpi.so"):
        if os.path.exists(os.path.join(built, name)):
            assert os.path.exists(os.path.join(os.path.dirname(path), name)), name
    assert has_cuda == str(os.path.exists(os.path.join(built, "libffnn-cuda.so"))), has_cuda
    print("the wheel's module trains in the venv (%.2f s)" % (time.perf_counter() - t))
