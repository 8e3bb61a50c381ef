#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout with `dash` built for CUDA (static cudart, header-only
# fmt: a binary built on the dev machine runs there as it is):
#   cmake -S . -B build-device-bench -G Ninja -DDASH_CODEGEN=OFF -DDASH_PERF=OFF
#   cmake --build build-device-bench --target dash
# then, there:
#   scripts/bench.sh [--head-dims 64,128] [--seqlens 512,...] [--masks full,causal] [--iters 10]
#                    [--warmup 3] [--strategies fa3,...] [--modes det,nondet] [--kernels sm80,sm90]
# `dash bench` (once per kernel family of --kernels, default auto) and PyTorch's backends
# (scripts/bench_torch.py: SDPA flash and cuDNN, FlashAttention-4 deterministic and not where it
# imports) run on the same grid in the same run; the JSONs are merged into markdown tables,
# printed last. With OUT set, the JSONs, logs and
# the table (bench.md) are written there, else under out/bench.
# Environment: DASH_BIN (default build-device-bench/tools/dash), DASH_COMMIT (recorded in the
# JSON; default: git's HEAD when there is a .git), DASH_TIMEOUT / TORCH_TIMEOUT (seconds per tool).
set -uo pipefail
cd "$(dirname "$0")/.."

bin="${DASH_BIN:-build-device-bench/tools/dash}"
out="${OUT:-out/bench}"
mkdir -p "$out"
commit="${DASH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"

# Grid flags go to both tools; strategies and modes only to dash.
common=()
dash_only=()
kernels=auto
while [[ $# -gt 0 ]]; do
  case "$1" in
    --head-dims|--seqlens|--masks|--iters|--warmup|--total-tokens|--hidden|--seed)
      [[ $# -ge 2 ]] || { echo "bench.sh: error: $1 needs a value" >&2; exit 2; }
      common+=("$1" "$2"); shift 2 ;;
    --strategies|--modes)
      [[ $# -ge 2 ]] || { echo "bench.sh: error: $1 needs a value" >&2; exit 2; }
      dash_only+=("$1" "$2"); shift 2 ;;
    --kernels)
      [[ $# -ge 2 ]] || { echo "bench.sh: error: $1 needs a value" >&2; exit 2; }
      kernels="$2"; shift 2 ;;
    *) echo "bench.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "bench.sh: error: $bin not found (build the dash target for CUDA first)" >&2; exit 2; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader \
  > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"

status=0
dash_json=()
for kernel in ${kernels//,/ }; do
  echo "==== dash bench --kernel $kernel ${common[*]} ${dash_only[*]} (commit $commit)"
  timeout "${DASH_TIMEOUT:-3000}" "$bin" bench "${common[@]}" "${dash_only[@]}" --kernel "$kernel" \
    --commit "$commit" --json "$out/dash-$kernel.json" > "$out/dash-$kernel.txt" 2> "$out/dash-$kernel.log"
  rc=$?
  cat "$out/dash-$kernel.log" "$out/dash-$kernel.txt"
  [[ $rc -ne 0 ]] && { echo "bench.sh: dash bench --kernel $kernel failed (exit $rc)"; status=1; }
  dash_json+=(--dash "$out/dash-$kernel.json")
done

echo "==== PyTorch (SDPA, FlashAttention-4) ${common[*]}"
PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-1800}" python3 scripts/bench_torch.py "${common[@]}" \
  --commit "$commit" --json "$out/torch.json" 2>&1 | tee "$out/torch.log"
rc=${PIPESTATUS[0]}
[[ $rc -ne 0 ]] && { echo "bench.sh: bench_torch.py failed (exit $rc)"; status=1; }

# The markdown tables (scripts/bench_table.py), printed last.
python3 scripts/bench_table.py "${dash_json[@]}" --torch "$out/torch.json" | tee "$out/bench.md"
exit $status
