# pip install ./python: setuptools with the build step of _build_libffnn.py (make builds
# libffnn, the wheel carries it); the metadata is in pyproject.toml.
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _build_libffnn import BinaryDistribution, cmdclass  # noqa: E402

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
