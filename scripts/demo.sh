#!/usr/bin/env bash
# The demo: set up, build the `dash` CLI, and compare every named schedule on an H200-shaped causal
# problem (the DASH/FA3 grid point: 16384 tokens, hidden 2048, head-dim 128, seqlen 8192).
# Prints the table; writes out/compare.json, out/compare.svg (Gantt of the best schedule),
# out/trace.json (open in https://ui.perfetto.dev) and out/best-schedule.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="${DASH_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON >/dev/null
cmake --build "$build" --target dash --parallel "$(nproc)"
mkdir -p out
args=(--gpu h200 --batch 2 --heads 16 --seqlen 8192 --head-dim 128 --mask causal)
echo
echo "\$ dash compare ${args[*]}"
"$build"/tools/dash compare "${args[@]}" \
  --svg out/compare.svg --trace out/trace.json --schedule-out out/best-schedule.json
"$build"/tools/dash compare "${args[@]}" --json >out/compare.json
echo
echo "wrote out/compare.svg (Gantt of the best schedule), out/trace.json (Perfetto),"
echo "      out/best-schedule.json (replay: build/tools/dash simulate --schedule out/best-schedule.json),"
echo "      out/compare.json"
