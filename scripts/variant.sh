#!/usr/bin/env bash
# Builds one A/B variant of the GPU binaries for kernel work (dev machine): sm_90a only, the
# generic kernel only (generated/ not linked), extra CUDA flags (e.g. -DSOME_SWITCH=1), stripped
# copies under .carry/NAME (carried to the GPU machine; .carry is git-ignored), and the backward
# kernel's registers and spills (ptxas -v) printed.
# Usage: scripts/variant.sh NAME "CUDA_FLAGS" [TARGETS]   (TARGETS default: "rt_bench test_runtime")
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { echo "variant.sh: error: usage: scripts/variant.sh NAME \"CUDA_FLAGS\" [TARGETS]" >&2; exit 2; }
name=$1 flags=$2 targets=${3:-rt_bench test_runtime}
[[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "variant.sh: error: NAME '$name': letters, digits, - and _ only" >&2; exit 2; }
build=build-variant-$name
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_CODEGEN=OFF -DDASH_BENCHMARKS=OFF \
  -DDASH_LINK_GENERATED=OFF -DDASH_CUDA_ARCHS=90a -DDASH_WERROR=ON -DDASH_PTXAS_VERBOSE=ON \
  "-DCMAKE_CUDA_FLAGS=$flags" > /dev/null
# shellcheck disable=SC2086
if ! cmake --build "$build" --target $targets > "$build/variant.log" 2>&1; then
  tail -30 "$build/variant.log"; exit 1
fi
# One line per backward kernel: D, dtype (0 bf16, 1 fp16), spills, registers.
awk '/Compiling entry function .*bwd_main_kernel/ { match($0, /bwd_main_kernelILi[0-9]+ELi[0-9]/);
       k = substr($0, RSTART + 18, RLENGTH - 18); sub(/ELi/, " dtype ", k); k = "d " k; next }
     k != "" && /spill stores/ { sp = $0; sub(/^ +/, "", sp); next }
     k != "" && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/);
       print "bwd_main " k ": " substr($0, RSTART, RLENGTH) ", " sp; k = "" }' "$build/variant.log" | sort -u
mkdir -p ".carry/$name"
for t in $targets; do cp "$build/tests/runtime/$t" ".carry/$name/"; strip ".carry/$name/$t"; done
echo "variant.sh: .carry/$name: $targets"
