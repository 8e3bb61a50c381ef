#!/usr/bin/env bash
# Regenerates generated/ (the H200 default set of specialized backward kernels) from the schedule
# policy template (runtime/schedule/table_policy.cuh). Builds the `dash` CLI first, without the old
# generated/ kernels linked in (after a policy or protocol change they may not compile against the
# new headers). Same inputs give byte-identical files.
# Usage: scripts/regenerate.sh [BUILD_DIR]   (default: build-regen)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-regen}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_LINK_GENERATED=OFF > /dev/null
cmake --build "$build" --target dash --parallel "$(nproc)"
"$build/tools/dash" generate --default-set --out generated
