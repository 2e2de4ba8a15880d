#!/bin/sh
# install_deps.sh [--tests] - install the Debian/Ubuntu packages that ffnn's build and
# main job need (with --tests: also those of the test suite). The README's first command
# and .ci/run both use it. Installs only what is missing, with apt-get: as root, or
# through sudo when it needs no password; otherwise prints the exact command to run and
# fails. Does nothing (and needs no root) when everything is installed.
#   build + main job: build-essential (gcc, make, libgomp), pkg-config, zlib1g-dev,
#                     libcjson-dev, dataset-fashion-mnist (the default data when MNIST
#                     cannot be downloaded), libprotobuf-c-dev and protobuf-c-compiler
#                     (ffnn export --onnx: the library, and protoc-c, which generates
#                     the C code of its schema at build time)
#   --tests:          python3-numpy (the Python module's tests), python3-torch (the
#                     PyTorch twin), python3-pip and python3-setuptools (pip install
#                     of python/), openmpi-bin and libopenmpi-dev (the multi-process
#                     tests), clang, libclang-rt-14-dev and libomp-dev (make fuzz,
#                     make asan with clang), python3-sklearn (the tabular twin's data),
#                     python3-pytest, python3-pandas, python3-venv (tests/python/),
#                     python3-onnx (onnx.checker); then onnxruntime from PyPI (it has
#                     no Debian package) with pip for /usr/bin/python3 (the ONNX tests)
# nvcc is not a Debian package here: install NVIDIA's CUDA toolkit for the GPU backend
# (the build finds /usr/local/cuda/bin/nvcc; without it the build is CPU only).
set -eu
pkgs="build-essential pkg-config zlib1g-dev libcjson-dev dataset-fashion-mnist \
      libprotobuf-c-dev protobuf-c-compiler"
case "${1:-}" in
    --tests) pkgs="$pkgs python3-numpy python3-torch python3-pip python3-setuptools \
                   openmpi-bin libopenmpi-dev clang libclang-rt-14-dev libomp-dev \
                   python3-sklearn python3-pytest python3-pandas python3-venv \
                   python3-onnx" ;;
    "") ;;
    *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
esac

# onnxruntime (the ONNX tests): PyPI only; skipped when it imports already
onnxruntime_step() {
    [ "${1:-}" = --tests ] || return 0
    /usr/bin/python3 -c "import onnxruntime" 2>/dev/null && return 0
    echo "install_deps: pip install onnxruntime (no Debian package)"
    /usr/bin/python3 -m pip install -q --break-system-packages onnxruntime ||
        echo "install_deps: pip could not install onnxruntime; the ONNX tests will skip," \
             "naming it" >&2
}

missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q " installed$" ||
        missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "install_deps: installed:$(printf ' %s' $pkgs)"
    onnxruntime_step "${1:-}"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_deps: not a Debian/Ubuntu system (no apt-get); install the" \
         "equivalents of:$missing" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
else
    echo "install_deps: missing:$missing" >&2
    echo "install_deps: run this (as a user who may use sudo), then the command again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "install_deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
onnxruntime_step "${1:-}"
