"""ffnn - feed-forward neural networks trained by libffnn (hand-written kernels on the
CPU and on NVIDIA GPUs), from Python with numpy arrays.

    import numpy as np, ffnn
    model = ffnn.train(X, y, arch="784-256relu-10", epochs=10)   # X float32 [n, 784]
    p = model.predict(X_test)                                     # softmax [n, 10]
    model.evaluate(X_test, y_test)["accuracy"]
    model.save("model.safetensors"); ffnn.load("model.safetensors")
    clf = ffnn.MLPClassifier(hidden_layer_sizes=(256,)).fit(X, y)  # scikit-learn style

Pure Python over libffnn.so (ctypes): found through $FFNN_LIBRARY, the build tree of
a source checkout, or the system's loader (make install). Errors of the library are
raised as ffnn.FfnnError (a ValueError for bad arguments, an OSError for files) with
its message.
"""
from ._lib import FfnnError, FfnnIOError, FfnnValueError, lib as _libffnn, path as library_path
from .estimators import MLPClassifier, MLPRegressor
from .model import Model, load, train

__all__ = ["Model", "train", "load", "MLPClassifier", "MLPRegressor", "FfnnError",
           "FfnnValueError", "FfnnIOError", "version", "has_cuda", "cuda_device_count",
           "library_path", "__version__"]


def version():
    """The version of the libffnn in use, "MAJOR.MINOR.PATCH"."""
    return _libffnn.ffnn_version(None, None, None).decode()


def has_cuda():
    """True when the libffnn in use was built with CUDA."""
    return bool(_libffnn.ffnn_has_cuda())


def cuda_device_count():
    """CUDA GPUs libffnn can use (0 without CUDA or without a GPU)."""
    return _libffnn.ffnn_cuda_device_count()


__version__ = version()
