#!/usr/bin/env bash
# Runs on the GPU machine, from the repo root, with binaries built on the dev machine:
#   cmake -S . -B build-device -G Ninja -DDASH_CODEGEN=OFF -DDASH_BENCHMARKS=OFF \
#         -DCMAKE_CUDA_ARCHITECTURES="80;90a" && cmake --build build-device --target test_runtime rt_bench
# (fmt header-only and static cudart, so they run there as they are). Usage:
#   scripts/gpu.sh [tests|grid|bench|quick|all]   logs under $OUT (or ./out), a short table last.
#   scripts/gpu.sh codegen all of .carry/main's test_runtime, then its rt_bench specialized in
#                          interleaved rounds; each under its own timeout.
#   scripts/gpu.sh final   two prebuilt variants, .carry/main and .carry/ww (test_runtime, rt_bench
#                          each): specialized vs generic and grid determinism on main, then the
#                          writer-warp variant's tests, timings next to main's, and its grid; every
#                          stage under its own timeout inside one overall budget (FINAL_BUDGET_S).
# grid: determinism on the whole DASH grid (rt_bench grid: every shape x named strategy, 10 runs
# bitwise, and the atomic mode on the same shapes); all = tests, grid, bench, PyTorch SDPA.
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
out="${OUT:-out}"
mkdir -p "$out"
bin=build-device/tests/runtime
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
git rev-parse --short HEAD 2>/dev/null | tee -a "$out/gpu.txt"
if [[ "$what" == codegen ]]; then
  # The full GPU test suite and the interleaved specialized-vs-generic timing of .carry/main's
  # prebuilt binaries, each under its own timeout (CODEGEN_ROUNDS rounds, default 7).
  main=.carry/main summary="$out/summary.txt"
  cat "$out/gpu.txt" > "$summary"
  s0=$SECONDS
  timeout -k 5 "${TESTS_LIMIT_S:-130}" "$main/test_runtime" --durations yes > "$out/tests.log" 2>&1
  rc=$?
  echo "test_runtime (all GPU tests): rc=$rc $((SECONDS - s0))s$([[ $rc == 124 || $rc == 137 ]] && echo ' TIMED OUT')" | tee -a "$summary"
  s0=$SECONDS
  timeout -k 5 "${BENCH_LIMIT_S:-110}" "$main/rt_bench" specialized generated/manifest.json "${CODEGEN_ROUNDS:-7}" \
    > "$out/specialized.txt" 2>&1
  rc=$?
  echo "rt_bench specialized: rc=$rc $((SECONDS - s0))s$([[ $rc == 124 || $rc == 137 ]] && echo ' TIMED OUT')" | tee -a "$summary"
  tail -8 "$out/tests.log"
  cat "$out/specialized.txt" "$summary"
  exit 0
fi
if [[ "$what" == final ]]; then
  main=.carry/main ww=.carry/ww
  budget=${FINAL_BUDGET_S:-450}
  t0=$SECONDS
  summary="$out/summary.txt"
  # Runs one stage with its own limit, cut to what is left of the budget; records rc and seconds.
  stage() {
    local name=$1 limit=$2 log=$3; shift 3
    local left=$((budget - (SECONDS - t0)))
    (( limit > left )) && limit=$left
    if (( limit < 5 )); then echo "$name: not run (budget spent)" | tee -a "$summary"; return 125; fi
    local s0=$SECONDS
    echo "---- $name: $* (limit ${limit}s)" >> "$log"
    timeout -k 5 "$limit" "$@" >> "$log" 2>&1
    local rc=$?
    echo "$name: rc=$rc $((SECONDS - s0))s (limit ${limit}s)$([[ $rc == 124 || $rc == 137 ]] && echo ' TIMED OUT')" | tee -a "$summary"
    return $rc
  }
  cat "$out/gpu.txt" > "$summary"
  stage "main specialized" 90 "$out/specialized.txt" "$main/rt_bench" specialized
  stage "main test: specializations == generic" 60 "$out/specialized.txt" "$main/test_runtime" \
    "generated specializations equal the generic kernel bit for bit"
  stage "main grid 10" 150 "$out/grid_main.txt" "$main/rt_bench" grid 10
  shapes=(128/8192/full 128/8192/causal 64/4096/full)
  if stage "ww test_runtime" 100 "$out/ww_tests.log" "$ww/test_runtime" --durations yes; then
    stage "ww timing" 45 "$out/timing.txt" "$ww/rt_bench" shapes "${shapes[@]}"
    stage "main timing" 45 "$out/timing.txt" "$main/rt_bench" shapes "${shapes[@]}"
    stage "ww grid 10" 150 "$out/grid_ww.txt" "$ww/rt_bench" grid 10
  else
    echo "ww: tests failed or hung: ww stages stopped" | tee -a "$summary"
  fi
  echo "==== summary ===="
  for f in specialized.txt grid_main.txt timing.txt grid_ww.txt; do
    [[ -f "$out/$f" ]] && { echo "== $f"; cat "$out/$f"; }
  done
  [[ -f "$out/ww_tests.log" ]] && { echo "== ww_tests.log (tail)"; tail -5 "$out/ww_tests.log"; }
  cat "$summary"
  exit 0
fi
status=0
if [[ "$what" == tests || "$what" == all ]]; then
  "$bin/test_runtime" --durations yes 2>&1 | tee "$out/tests.log"
  test_rc=${PIPESTATUS[0]}
  [[ $test_rc -ne 0 ]] && status=1
fi
if [[ "$what" == grid || "$what" == all ]]; then
  "$bin/rt_bench" grid 10 2>&1 | tee "$out/grid.txt"
  [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if [[ "$what" == bench || "$what" == all || "$what" == quick ]]; then
  mode=""; [[ "$what" == quick ]] && mode=quick
  "$bin/rt_bench" $mode 2>&1 | tee "$out/bench.txt"
  if [[ "$what" != quick ]]; then
    PYTHONUNBUFFERED=1 python3 - <<'PY' 2>&1 | tee "$out/sdpa.txt"
# PyTorch SDPA backward (flash, cuDNN) on the same shapes, same method: events, warm-up, median of 10.
import torch, statistics
from torch.nn.attention import sdpa_kernel, SDPBackend
shapes = [(128,1024,False),(128,4096,False),(128,8192,False),(128,1024,True),(128,4096,True),(128,8192,True),
          (64,1024,False),(64,4096,False),(64,4096,True)]
print(f"{'d':4} {'seqlen':6} {'mask':6} {'backend':8} {'ms':>9} {'TFLOP/s':>9}")
for d, s, causal in shapes:
    h, b = 2048 // d, 16384 // s
    flops = 2.5 * 4 * b * h * s * s * d * (0.5 if causal else 1.0)
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        try:
            sets = []
            for _ in range(2):
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
                with sdpa_kernel(be):
                    o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                sets.append((q, k, v, o, torch.randn_like(o)))
            times = []
            for r in range(13):
                q, k, v, o, g = sets[r % 2]
                st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                st.record()
                torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                en.record(); torch.cuda.synchronize()
                if r >= 3: times.append(st.elapsed_time(en))
            ms = statistics.median(times)
            print(f"{d:<4} {s:<6} {'causal' if causal else 'full':6} {name:8} {ms:9.3f} {flops/ms/1e9:9.1f}")
        except Exception as e:
            print(f"{d:<4} {s:<6} {'causal' if causal else 'full':6} {name:8} failed: {type(e).__name__}")
PY
  fi
fi
echo "==== summary ===="
[[ -f "$out/tests.log" ]] && grep -E "^determinism:|test cases|assertions" "$out/tests.log" | tail -20
[[ -f "$out/grid.txt" ]] && cat "$out/grid.txt"
[[ -f "$out/bench.txt" ]] && cat "$out/bench.txt"
[[ -f "$out/sdpa.txt" ]] && cat "$out/sdpa.txt"
exit $status
