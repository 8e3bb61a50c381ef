#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout with `dash` built for CUDA (static cudart, header-only
# fmt: a binary built on the dev machine runs there as it is):
#   cmake -S . -B build-device-bench -G Ninja -DDASH_CODEGEN=OFF -DDASH_PERF=OFF
#   cmake --build build-device-bench --target dash
# then, there:
#   scripts/bench.sh [--head-dims 64,128] [--seqlens 512,...] [--masks full,causal] [--iters 10]
#                    [--warmup 3] [--strategies fa3,...] [--modes det,nondet] [--kernels sm80,sm90]
#                    [--backends fa4,fa4-det] [--rounds 2]
# `dash bench` (once per kernel family of --kernels, default auto) and PyTorch's backends
# (scripts/bench_torch.py: SDPA flash and cuDNN, FlashAttention-4 deterministic and not where it
# imports; --backends narrows them) run on the same grid in the same run; the JSONs are merged into
# markdown tables, printed last.
# --rounds N (N >= 2) runs both sides N times in alternating order, ours then the peers in odd
# rounds and the peers then ours in even ones (ABBA for two), so that a change of the machine's
# state (the power cap stepping the clock down, docs/design.md §6) falls on both sides alike; the
# table is then scripts/bench_table.py --round: the geometric mean of the rounds and each round's
# ratio. Throughout, where nvidia-smi runs, the SM clock, power and clock event reasons are sampled
# every 100 ms into clocks.csv, each tool's start and end marked in phases.txt (the inputs of
# scripts/sustained_table.py).
# With OUT set, the JSONs, logs and the table (bench.md) are written there, else under out/bench:
# dash-KERNEL.json and torch.json for one round, dash-KERNEL-rN.json and torch-rN.json for several.
# Environment: DASH_BIN (default build-device-bench/tools/dash), DASH_COMMIT (recorded in the
# JSON; default: git's HEAD when there is a .git), DASH_TIMEOUT / TORCH_TIMEOUT (seconds per tool),
# TORCH_BENCH (the peers' script, default scripts/bench_torch.py; the script test puts its own).
set -uo pipefail
cd "$(dirname "$0")/.."
# Empty arrays expand under set -u only from bash 4.4 on.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 404 )); then
  echo "bench.sh: error: needs bash 4.4 or later (this is $BASH_VERSION)" >&2
  exit 2
fi

bin="${DASH_BIN:-build-device-bench/tools/dash}"
out="${OUT:-out/bench}"
commit="${DASH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"

# Grid flags go to both tools; strategies and modes only to dash, backends only to bench_torch.py.
common=()
dash_only=()
torch_only=()
kernels=auto
rounds=1
usage() { echo "bench.sh: error: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --head-dims|--seqlens|--masks|--iters|--warmup|--total-tokens|--hidden|--seed)
      [[ $# -ge 2 ]] || usage "$1 needs a value"
      common+=("$1" "$2"); shift 2 ;;
    --strategies|--modes)
      [[ $# -ge 2 ]] || usage "$1 needs a value"
      dash_only+=("$1" "$2"); shift 2 ;;
    --backends)
      [[ $# -ge 2 ]] || usage "$1 needs a value"
      torch_only+=("$1" "$2"); shift 2 ;;
    --kernels)
      [[ $# -ge 2 ]] || usage "$1 needs a value"
      kernels="$2"; shift 2 ;;
    --rounds)
      [[ $# -ge 2 ]] || usage "$1 needs a value"
      [[ "$2" =~ ^[1-9][0-9]?$ ]] || usage "--rounds: a whole number from 1 to 99, not '$2'"
      rounds="$2"; shift 2 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
[[ -x "$bin" ]] || usage "$bin not found (build the dash target for CUDA first)"
mkdir -p "$out"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,memory.total \
  --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"

# The clock sampler, stopped however the script ends.
: > "$out/phases.txt"
sampler=
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
  sampler=$!
  trap 'kill $sampler 2> /dev/null' EXIT
fi
mark() { echo "$(date +%s.%N) $*" >> "$out/phases.txt"; }

status=0
# ours SUFFIX: each kernel family of --kernels, into dash-KERNEL$SUFFIX.json.
ours() {
  local suffix="$1" kernel rc
  for kernel in ${kernels//,/ }; do
    local name="dash-$kernel$suffix"
    echo "==== dash bench --kernel $kernel ${common[*]} ${dash_only[*]} (commit $commit)"
    rm -f "$out/$name.json"  # a failed run leaves none, rather than an earlier run's
    mark start "$name"
    timeout "${DASH_TIMEOUT:-3000}" "$bin" bench "${common[@]}" "${dash_only[@]}" --kernel "$kernel" \
      --commit "$commit" --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.log"
    rc=$?
    mark end "$name"
    cat "$out/$name.log" "$out/$name.txt"
    [[ $rc -ne 0 ]] && { echo "bench.sh: dash bench --kernel $kernel failed (exit $rc)"; status=1; }
  done
}
peers() {
  local name="torch$1" rc
  echo "==== PyTorch (SDPA, FlashAttention-4) ${common[*]} ${torch_only[*]}"
  rm -f "$out/$name.json"
  mark start "$name"
  PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-1800}" python3 "${TORCH_BENCH:-scripts/bench_torch.py}" "${common[@]}" \
    "${torch_only[@]}" --commit "$commit" --json "$out/$name.json" 2>&1 | tee "$out/$name.log"
  rc=${PIPESTATUS[0]}
  mark end "$name"
  [[ $rc -ne 0 ]] && { echo "bench.sh: bench_torch.py failed (exit $rc)"; status=1; }
}

# The markdown tables (scripts/bench_table.py), printed last.
if [[ $rounds == 1 ]]; then
  ours ""
  peers ""
  dash_json=()
  for kernel in ${kernels//,/ }; do dash_json+=(--dash "$out/dash-$kernel.json"); done
  python3 scripts/bench_table.py "${dash_json[@]}" --torch "$out/torch.json" | tee "$out/bench.md"
  [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
else
  round_args=()
  for r in $(seq 1 "$rounds"); do
    echo "==== round $r of $rounds"
    if (( r % 2 == 1 )); then ours "-r$r"; peers "-r$r"; else peers "-r$r"; ours "-r$r"; fi
    # A run that failed (its log says why) left no file: the table has the others' and names it.
    round_args+=(--round)
    for kernel in ${kernels//,/ }; do round_args+=("$out/dash-$kernel-r$r.json"); done
    round_args+=("$out/torch-r$r.json")
  done
  python3 scripts/bench_table.py "${round_args[@]}" | tee "$out/bench.md"
  [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
exit $status
