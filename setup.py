# pip install . : setuptools with python/_build_libffnn.py's build step (make builds
# libffnn, the wheel carries it); metadata in pyproject.toml; setuptools' scratch
# folder under build/ (the C build's, ignored by git).
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from _build_libffnn import BinaryDistribution, cmdclass  # noqa: E402

setup(cmdclass=cmdclass, distclass=BinaryDistribution,
      options={"build": {"build_base": "build/python-build"}})
