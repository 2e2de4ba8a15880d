"""ffnn - feed-forward neural networks trained by libffnn (hand-written kernels on the
CPU and on NVIDIA GPUs), from Python with numpy arrays.

    import numpy as np, ffnn
    model = ffnn.train(X, y, arch="784-256relu-10", epochs=10)   # X float32 [n, 784]
    p = model.predict(X_test)                                     # softmax [n, 10]
    model.evaluate(X_test, y_test)["accuracy"]
    model.save("model.safetensors"); ffnn.load("model.safetensors")
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(256,)).fit(X, y)  # a scikit-learn estimator
    results = ffnn.sweep(X, y, {"learning_rate": [0.01, 0.1], "seed": [1, 2]})  # ranked

Python over libffnn.so (ctypes). ``import ffnn`` loads nothing but this file: numpy,
libffnn (and, in a CUDA build, the CUDA libraries it links) load when a name that needs
them is first used, scikit-learn when MLPClassifier or MLPRegressor is. libffnn is
found through $FFNN_LIBRARY, next to this file (a wheel), the build tree of a source
checkout, or the system's loader (make install). Errors of the library are raised as
ffnn.FfnnError (a ValueError for bad arguments, an OSError for files) with its
message.
"""
from typing import TYPE_CHECKING

__version__ = "0.1.0"  # the package's version; the library's: ffnn.version()

__all__ = ["Model", "train", "load", "sweep", "ensemble", "MLPClassifier", "MLPRegressor", "FfnnError",
           "FfnnValueError", "FfnnIOError", "version", "has_cuda", "cuda_device_count",
           "library_path", "__version__"]

# name -> (submodule, attribute): imported on first use (PEP 562)
_LAZY = {"Model": ("model", "Model"), "train": ("model", "train"), "load": ("model", "load"),
         "sweep": ("sweep", "sweep"), "ensemble": ("model", "ensemble"),
         "MLPClassifier": ("estimators", "MLPClassifier"),
         "MLPRegressor": ("estimators", "MLPRegressor"),
         "FfnnError": ("_lib", "FfnnError"), "FfnnValueError": ("_lib", "FfnnValueError"),
         "FfnnIOError": ("_lib", "FfnnIOError"), "library_path": ("_lib", "path")}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time __getattr__ imports them
    from ._lib import FfnnError, FfnnIOError, FfnnValueError  # noqa: F401
    from ._lib import path as library_path  # noqa: F401
    from .estimators import MLPClassifier, MLPRegressor  # noqa: F401
    from .model import Model, ensemble, load, train  # noqa: F401
    from .sweep import sweep  # noqa: F401


def __getattr__(name):
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module("." + module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError("module 'ffnn' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(__all__))


def version() -> str:
    """The version of the libffnn in use, "MAJOR.MINOR.PATCH" (loads it)."""
    from ._lib import lib
    return lib.ffnn_version(None, None, None).decode()


def has_cuda() -> bool:
    """True when the libffnn in use was built with CUDA (loads it)."""
    from ._lib import lib
    return bool(lib.ffnn_has_cuda())


def cuda_device_count() -> int:
    """CUDA GPUs libffnn can use (0 without CUDA or without a GPU; loads it)."""
    from ._lib import lib
    return lib.ffnn_cuda_device_count()
