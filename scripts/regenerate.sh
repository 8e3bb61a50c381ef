#!/usr/bin/env bash
# Regenerates generated/ (the H200 default set of specialized backward kernels) from the runtime's
# template. Builds the `dash` CLI first if needed. Same inputs give byte-identical files.
# Usage: scripts/regenerate.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target dash --parallel "$(nproc)"
"$build/tools/dash" generate --default-set --out generated
