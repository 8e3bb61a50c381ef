#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout with `dash` built for CUDA (static cudart, header-only
# fmt: a binary built on the dev machine runs there as it is):
#   cmake -S . -B build-device-bench -G Ninja -DDASH_CODEGEN=OFF -DDASH_BENCHMARKS=OFF
#   cmake --build build-device-bench --target dash
# then, there:
#   scripts/bench.sh [--head-dims 64,128] [--seqlens 512,...] [--masks full,causal] [--iters 10]
#                    [--warmup 3] [--strategies fa3,...] [--modes det,nondet]
# `dash bench` and PyTorch SDPA (scripts/bench_torch.py) run on the same grid in the same run;
# both JSONs are merged into one markdown table, printed last. With OUT set, the JSONs, logs and
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
while [[ $# -gt 0 ]]; do
  case "$1" in
    --head-dims|--seqlens|--masks|--iters|--warmup|--total-tokens|--hidden|--seed)
      [[ $# -ge 2 ]] || { echo "bench.sh: error: $1 needs a value" >&2; exit 2; }
      common+=("$1" "$2"); shift 2 ;;
    --strategies|--modes)
      [[ $# -ge 2 ]] || { echo "bench.sh: error: $1 needs a value" >&2; exit 2; }
      dash_only+=("$1" "$2"); shift 2 ;;
    *) echo "bench.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "bench.sh: error: $bin not found (build the dash target for CUDA first)" >&2; exit 2; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader \
  > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"

status=0
echo "==== dash bench ${common[*]} ${dash_only[*]} (commit $commit)"
timeout "${DASH_TIMEOUT:-3000}" "$bin" bench "${common[@]}" "${dash_only[@]}" --commit "$commit" \
  --json "$out/dash.json" > "$out/dash.txt" 2> "$out/dash.log"
rc=$?
cat "$out/dash.log" "$out/dash.txt"
[[ $rc -ne 0 ]] && { echo "bench.sh: dash bench failed (exit $rc)"; status=1; }

echo "==== PyTorch SDPA ${common[*]}"
PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-1800}" python3 scripts/bench_torch.py "${common[@]}" \
  --commit "$commit" --json "$out/torch.json" 2>&1 | tee "$out/torch.log"
rc=${PIPESTATUS[0]}
[[ $rc -ne 0 ]] && { echo "bench.sh: bench_torch.py failed (exit $rc)"; status=1; }

# One markdown table: a row per shape; PyTorch's backends, then each strategy's deterministic
# TFLOP/s, fa3's non-deterministic one, and for the best deterministic strategy its det/non-det
# ratio and the simulator's predicted speedup over fa3 next to the measured one.
python3 - "$out" <<'PY' | tee "$out/bench.md"
import json, os, sys
out = sys.argv[1]

def load(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)

dash, torch = load("dash.json"), load("torch.json")
def key(r):
    return (r["head_dim"], r["mask"], r["seqlen_q"], r["batch"], r["heads"])

shapes = []
for r in dash + torch:
    if key(r) not in shapes:
        shapes.append(key(r))
shapes.sort(key=lambda k: (k[0], k[1] != "full", k[2]))
strategies = []
for r in dash:
    if r["strategy"] not in strategies:
        strategies.append(r["strategy"])
backends = []
for r in torch:
    if r["backend"] not in backends:
        backends.append(r["backend"])

def cell(v, fmt="{:.1f}"):
    return "-" if v is None else fmt.format(v)

first = (dash or torch or [{}])[0]
print(f"## dash bench vs PyTorch SDPA: backward TFLOP/s, bf16")
print()
print(f"GPU: {first.get('gpu', '?')} ({first.get('sms', '?')} SMs); date {first.get('date', '?')}; "
      f"commit {first.get('commit') or '?'}; median of {first.get('iters', '?')} after "
      f"{first.get('warmup', '?')} warm-up calls, CUDA events around the backward call.")
if torch:
    t = torch[0]
    print(f"PyTorch {t.get('torch')} (CUDA {t.get('cuda')}, cuDNN {t.get('cudnn')}), SDPA backward only "
          "(autograd.grad on a recorded forward).")
print("FLOPs = 2.5 x 4*b*h*s*s*d, halved for causal. `det/nd`: det over non-det TFLOP/s of the best "
      "deterministic strategy; `pred`/`meas`: its speedup over fa3 (deterministic), simulated vs measured.")
print()
head = ["d", "mask", "seqlen", "b x h"] + [f"SDPA {b}" for b in backends] + \
       [f"{s} det" for s in strategies] + ["fa3 nondet", "best det", "det/nd", "pred", "meas"]
print("| " + " | ".join(head) + " |")
print("|" + "|".join("---" for _ in head) + "|")
for k in shapes:
    d, mask, s, b, h = k
    row = [str(d), mask, str(s), f"{b} x {h}"]
    for be in backends:
        rec = next((r for r in torch if key(r) == k and r["backend"] == be), None)
        row.append(cell(rec and rec.get("tflops")) if rec is None or rec["status"] == "ok" else "failed")
    det = {}
    for st in strategies:
        rec = next((r for r in dash if key(r) == k and r["strategy"] == st and r["mode"] == "det"), None)
        if rec is not None and rec["status"] == "refused":
            row.append("refused")
        else:
            row.append(cell(rec and rec.get("tflops")))
            if rec is not None and rec.get("tflops") is not None:
                det[st] = rec
    fa3_nd = next((r for r in dash if key(r) == k and r["strategy"] == "fa3" and r["mode"] == "nondet"), None)
    row.append(cell(fa3_nd and fa3_nd.get("tflops")))
    if det:
        best = max(det.values(), key=lambda r: r["tflops"])
        row += [best["strategy"], cell(best.get("det_over_nondet"), "{:.3f}"),
                cell(best.get("predicted_vs_fa3"), "{:.3f}x"), cell(best.get("measured_vs_fa3"), "{:.3f}x")]
    else:
        row += ["-", "-", "-", "-"]
    print("| " + " | ".join(row) + " |")
if not dash:
    print("\n(no dash results: see dash.log)")
if not torch:
    print("\n(no PyTorch results: see torch.log)")
PY
exit $status
