"""_build_libffnn.py - the setuptools build step that puts libffnn into the wheel (used
by python/setup.py and the repository root's setup.py; not part of the package).

`pip install ./python` (or `pip install .` at the root, `pip wheel`, `python -m build`)
runs build_py, which here also runs make in the repository root to build
libffnn.so.MAJOR (into build/, the tree's usual build folder: an up-to-date build is
reused) and copies it into the wheel's ffnn/ folder, where ffnn/_lib.py finds it
first. The environment reaches make: NVCC= (empty) builds the CPU-only library,
without it make's own rule applies (CUDA when nvcc is found); FFNN_BUILD_DIR names
another build folder; FFNN_MAKE_JOBS make's -j (default: the cores);
FFNN_WHEEL_LIBRARY=PATH puts that already built libffnn.so.MAJOR.MINOR.PATCH into the
wheel instead of running make (packagers; tests/test_python.py packs the library it
tests). The modules of the build (libffnn-cuda.so, libffnn-mpi.so: docs/BUILD.md "The
CUDA and MPI modules") go beside libffnn in the wheel, where libffnn looks for them first.
"""
import os
import shutil
import subprocess

from setuptools import Distribution
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SONAME = "libffnn.so.0"  # python/ffnn/_lib.py's _SONAME
MODULES = ("libffnn-cuda.so", "libffnn-mpi.so")  # the Makefile's MODULES


def _version():
    parts = {}
    with open(os.path.join(ROOT, "include", "ffnn.h")) as f:
        for line in f:
            for key in ("MAJOR", "MINOR", "PATCH"):
                if line.startswith("#define FFNN_VERSION_%s " % key):
                    parts[key] = line.split()[2]
    return "%s.%s.%s" % (parts["MAJOR"], parts["MINOR"], parts["PATCH"])


class BuildPyWithLibffnn(build_py):
    """build_py, then make's libffnn.so.MAJOR copied into the package."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "ffnn", SONAME)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        prebuilt = os.environ.get("FFNN_WHEEL_LIBRARY")
        if prebuilt:
            shutil.copyfile(os.path.realpath(prebuilt), target)
            self._copy_modules(os.path.dirname(os.path.realpath(prebuilt)), target)
            return
        if not os.path.exists(os.path.join(ROOT, "Makefile")):
            raise RuntimeError("ffnn: %s has no Makefile: build the wheel from a source "
                               "checkout of ffnn" % ROOT)
        build = os.path.abspath(os.environ.get("FFNN_BUILD_DIR") or os.path.join(ROOT, "build"))
        jobs = os.environ.get("FFNN_MAKE_JOBS") or str(os.cpu_count() or 1)
        shlib = os.path.join(build, "libffnn.so.%s" % _version())
        cmd = ["make", "-C", ROOT, "-j", jobs, "BUILD=" + build, shlib, "modules"]
        self.announce("ffnn: " + " ".join(cmd), level=2)
        try:
            subprocess.check_call(cmd)
        except (OSError, subprocess.CalledProcessError) as e:
            raise RuntimeError("ffnn: building libffnn failed (%s); the C build needs "
                               "gcc, make, zlib and cJSON: tools/install_deps.sh" % e) from e
        shutil.copyfile(shlib, target)
        built = subprocess.check_output(["make", "-s", "--no-print-directory", "-C", ROOT,
                                         "BUILD=" + build, "print-modules"]).decode().split()
        for path in (p for p in built if p.endswith(".so")):
            shutil.copyfile(os.path.join(ROOT, path),
                            os.path.join(os.path.dirname(target), os.path.basename(path)))

    def _copy_modules(self, folder, target):
        """The modules beside a prebuilt libffnn (FFNN_WHEEL_LIBRARY), if any."""
        for name in MODULES:
            path = os.path.join(folder, name)
            if os.path.exists(path):
                shutil.copyfile(path, os.path.join(os.path.dirname(target), name))


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: a platform wheel, not py3-none-any."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPyWithLibffnn}
