#!/usr/bin/env bash
# Installs every build and test dependency of DASH. Idempotent. Debian packages for the C++ and
# CUDA build; for the Python package (python/) a virtual environment build-venv/ with pinned PyPI
# packages: the build backend, pytest and a torch to test against (the CPU tests need no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build git python3 python3-venv python3-pip
  libfmt-dev libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev
  clang-22 libclang-22-dev llvm-22-dev libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: installed ${missing[*]}"
fi

# Python packages, pinned. torch 2.11 is the GPU machine's version (the package builds against no
# torch, so this pin only fixes what the tests run with). cuobjdump and the nvdisasm it runs
# (NVIDIA's wheels; PyPI has none older than 13.2, and they read nvcc 13.0's objects) let
# scripts/sass_check.py read the sm_90a SASS.
python_pins=(torch==2.11.0 numpy==2.4.6 pytest==9.2.0 scikit-build-core==1.1.2
             nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37)
venv=build-venv
stamp="$venv/.pins"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${python_pins[*]}" ]; then
  echo "setup: python packages present"
else
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${python_pins[@]}"
  echo "${python_pins[*]}" > "$stamp"
  echo "setup: installed ${python_pins[*]} in $venv"
fi
