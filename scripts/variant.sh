#!/usr/bin/env bash
# Builds one A/B variant of the GPU binaries for kernel work (dev machine): sm_90a only, the
# generic kernel only (generated/ not linked), extra flags (e.g. -DSOME_SWITCH=1) for the CUDA and the
# C++ sources alike (a switch may change what the host sets up for the kernel), stripped
# copies under .carry/NAME (carried to the GPU machine; .carry is git-ignored), and the backward
# kernel's registers and spills (ptxas -v) printed.
# Usage: scripts/variant.sh NAME "CUDA_FLAGS" [TARGETS]   (TARGETS default: "rt_bench test_runtime")
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "variant.sh: error: usage: scripts/variant.sh NAME \"CUDA_FLAGS\" [TARGETS]" >&2; exit 2; }
name=$1 flags=$2 targets=${3:-rt_bench test_runtime}
[[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "variant.sh: error: NAME '$name': letters, digits, - and _ only" >&2; exit 2; }
build=build-variant-$name
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_CODEGEN=OFF -DDASH_PERF=OFF \
  -DDASH_LINK_GENERATED=OFF -DDASH_CUDA_ARCHS=90a -DDASH_WERROR=ON -DDASH_PTXAS_VERBOSE=ON \
  "-DCMAKE_CUDA_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" > /dev/null
# shellcheck disable=SC2086
if ! cmake --build "$build" --target $targets > "$build/variant.log" 2>&1; then
  tail -30 "$build/variant.log"; exit 1
fi
mkdir -p ".carry/$name"
for t in $targets; do cp "$build/tests/runtime/$t" ".carry/$name/"; strip ".carry/$name/$t"; done
# Exit 2: nothing of the kernel recompiled (only host code changed), no ptxas lines to summarize;
# any other failure (1: ptxas serialized the wgmma instructions) fails the build.
rc=0
scripts/ptxas_summary.py --arch sm_90a "$build/variant.log" || rc=$?
if ((rc == 2)); then echo "variant.sh: the kernel did not recompile"; elif ((rc != 0)); then exit "$rc"; fi
echo "variant.sh: .carry/$name: $targets"
