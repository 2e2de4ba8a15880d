"""Shared set-up of the Python module's pytest suite (tests/python/): the module from
the source tree's python/, over the libffnn.so named by $FFNN_LIBRARY (the runner
passes its build's; default build/libffnn.so of this checkout)."""
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("FFNN_LIBRARY", os.path.join(ROOT, "build", "libffnn.so"))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def lib():
    return os.environ["FFNN_LIBRARY"]


@pytest.fixture
def circle():
    """Points in [-1, 1)^2, label 1 inside the circle of radius sqrt(0.5)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (1200, 2))
    return X, ((X ** 2).sum(axis=1) < 0.5).astype(np.int64)
