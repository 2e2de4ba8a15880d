"""idx_files.py - the MNIST-format (idx) files of the Python benchmarks beside it
(vs_torch.py, torch_accuracy.py, ddp_torch.py, features_vs_torch.py import it):

- find_idx(): a data set file by its stem, plain or gzip'd;
- read_idx(): an idx file (gzip'd when its name ends in .gz) as a numpy uint8 array
  of the dimensions its header gives.
"""
import gzip
import os
import struct

import numpy as np


def find_idx(dir_, stem):
    """dir_/stem, else dir_/stem.gz; FileNotFoundError naming dir_/stem when neither exists."""
    for name in (stem, stem + ".gz"):
        if os.path.exists(os.path.join(dir_, name)):
            return os.path.join(dir_, name)
    raise FileNotFoundError(os.path.join(dir_, stem))


def read_idx(path):
    """The idx file at path as a read-only uint8 array of its dimensions (big-endian
    uint32 sizes after the 4-byte magic, whose last byte counts them)."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)
