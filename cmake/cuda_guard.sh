#!/usr/bin/env bash
# The CUDA compiler launcher of DASH_WERROR builds (cmake/Cuda.cmake): runs one nvcc command, prints
# its output, and fails it where ptxas reports that it serialized a kernel's wgmma instructions
# (its info C7520, "Potential Performance Loss"). Such a kernel is correct but about a quarter
# slower (a wait or branch between a warpgroup's wgmma issues causes it;
# docs/results/2026-12-04-h200-sm90-item-boundary.md), and ptxas has no switch that makes it an error.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" > "$log" 2>&1
rc=$?
cat "$log"
if [[ $rc -eq 0 ]] && grep -q "(C7520)" "$log"; then
  echo "cuda_guard.sh: error: ptxas serialized wgmma instructions (C7520 above); keep waits and branches out of a warpgroup's wgmma issue sequence" >&2
  exit 1
fi
exit $rc
