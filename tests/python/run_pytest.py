#!/usr/bin/python3
"""run_pytest.py LIBFFNN - the Python module's pytest suite (tests/python/) over the
libffnn.so at LIBFFNN, run by the C runner's python_pytest case (make test). Exit
status: pytest's (0 passed); 77 when pytest, numpy or scikit-learn is missing (the
runner reports a skip naming them)."""
import os
import sys

missing = []
for name, package in (("pytest", "python3-pytest"), ("numpy", "python3-numpy"),
                      ("sklearn", "python3-sklearn")):
    try:
        __import__(name)
    except ImportError:
        missing.append(package)
if missing:
    print("run_pytest.py: missing %s (apt-get install %s)" % (", ".join(missing),
                                                              " ".join(missing)),
          file=sys.stderr)
    sys.exit(77)

import pytest  # noqa: E402

os.environ["FFNN_LIBRARY"] = os.path.abspath(sys.argv[1])
here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", here] + sys.argv[2:]))
