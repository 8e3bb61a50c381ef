#!/usr/bin/env bash
# Sets up, builds (warnings as errors) and runs every test. GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON
cmake --build build --parallel "$(nproc)"
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
