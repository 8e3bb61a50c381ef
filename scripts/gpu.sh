#!/usr/bin/env bash
# The GPU side in one script. On the dev machine (nvcc, no GPU needed):
#   scripts/gpu.sh build        builds $BUILD (default build-device): test_runtime, rt_bench and dash
#                               for sm_80 and sm_90a, generated/ linked, static cudart and
#                               header-only fmt, so the binaries run on the GPU machine as they are
#                               (carry $BUILD there, or build there with the same command).
#   scripts/gpu.sh build-trace  the same with kernel traces (DASH_KERNEL_TRACE, generic kernels only)
#                               into $TRACE_BUILD (default build-trace): test_runtime and dash
# On the GPU machine, from the repo root:
#   scripts/gpu.sh [all|tests|sanitize|codegen|grid|bench]
#     tests    every GPU test, for each kernel family the GPU runs (numerics, every validated
#              schedule, 100-run determinism per named strategy with concurrent kernels,
#              specializations bit for bit equal to the generic), then the hidden slow ones
#              ("[big]", hidden: more than 32767 Q tiles on one sequence; BIG_LIMIT_S)
#     sanitize compute-sanitizer memcheck, racecheck (RACECHECK_RUNS times, default 3), synccheck (and
#              initcheck with SANITIZE_INITCHECK=1)
#              on the small-shape test
#              ("[sanitize]"): no findings, or the stage fails; then each tool of
#              SANITIZE_SPEC_TOOLS (default "memcheck synccheck") on the generated specializations
#              whose file names contain SANITIZE_SPECS (default d64_causal: one per family), each
#              run once next to its generic kernel on its own 8k problem (rt_bench specialized
#              MANIFEST 0 MATCH). racecheck there takes longer than 150 s (it sees the same kernel
#              body on the small shapes above; a specialization changes only the schedule policy)
#     codegen  rt_bench specialized: each kernel of generated/ vs the generic one, bitwise and
#              timed in interleaved rounds (CODEGEN_ROUNDS, default 7)
#     grid     determinism on the whole DASH grid (rt_bench grid 10)
#     trace    with $TRACE_BUILD's binaries: the trace test, then dash bench --trace (and --svg) of
#              each shape of TRACE_SHAPES (D/S/MASK, strategy TRACE_STRATEGY, default
#              symmetric-shift, family TRACE_KERNEL, default sm90) and dash calibrate over them
#              (calibrated.json); not part of "all"
#     bench    scripts/bench.sh: dash bench on the DASH grid (each family of BENCH_KERNELS, default
#              sm80,sm90) and PyTorch's backends (SDPA, FlashAttention-4 where it imports) in the
#              same run (BENCH_ROUNDS of them, default 1, in alternating order: bench.sh --rounds)
#     all      the five, in that order (default)
# Each stage runs under its own timeout (TESTS_LIMIT_S, BIG_LIMIT_S, SANITIZE_LIMIT_S, CODEGEN_LIMIT_S, GRID_LIMIT_S, and the
# DASH_TIMEOUT / TORCH_TIMEOUT of bench.sh); logs under $OUT (default out/gpu); a summary (exit
# code and seconds per stage) and the benchmark's tables are printed last. COMMIT is recorded in
# the benchmark's JSON (default: git's HEAD). Exit 0 when every stage passed, else 1; bad usage 2.
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
build="${BUILD:-build-device}"

if [[ "$what" == build-trace ]]; then
  set -e
  tbuild="${TRACE_BUILD:-build-trace}"
  cmake -S . -B "$tbuild" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON -DDASH_CODEGEN=OFF \
    -DDASH_PERF=OFF -DDASH_CUDA_ARCHS="80;90a" -DDASH_KERNEL_TRACE=ON -DDASH_LINK_GENERATED=OFF
  cmake --build "$tbuild" --target test_runtime dash
  exit 0
fi
if [[ "$what" == build ]]; then
  set -e
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON -DDASH_CODEGEN=OFF \
    -DDASH_PERF=OFF -DDASH_CUDA_ARCHS="80;90a"
  cmake --build "$build" --target test_runtime rt_bench dash initcheck_probe
  exit 0
fi
case "$what" in
  all|tests|sanitize|codegen|grid|bench|trace) ;;
  *) echo "gpu.sh: error: unknown stage '$what' (build, build-trace, all, tests, sanitize, codegen, grid, bench, trace)" >&2
     exit 2 ;;
esac
bin="$build/tests/runtime"
if [[ "$what" != trace ]]; then
  for f in "$bin/test_runtime" "$bin/rt_bench" "$build/tools/dash"; do
    [[ -x "$f" ]] || { echo "gpu.sh: error: $f not found (scripts/gpu.sh build first)" >&2; exit 2; }
  done
fi
out="${OUT:-out/gpu}"
mkdir -p "$out"
summary="$out/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$summary"
commit="${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
echo "commit $commit" | tee -a "$summary"

status=0
# stage NAME LIMIT_S LOG COMMAND...: runs one stage, records its exit code and seconds.
stage() {
  local name=$1 limit=$2 log=$3
  shift 3
  local s0=$SECONDS
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  [[ $rc -ne 0 ]] && status=1
  echo "$name: rc=$rc $((SECONDS - s0))s (limit ${limit}s)$([[ $rc == 124 || $rc == 137 ]] && echo ' TIMED OUT')" \
    | tee -a "$summary"
}
want() { [[ "$what" == all || "$what" == "$1" ]]; }

want tests && stage "tests" "${TESTS_LIMIT_S:-180}" "$out/tests.log" "$bin/test_runtime" --durations yes
want tests && stage "tests [big]" "${BIG_LIMIT_S:-400}" "$out/tests-big.log" "$bin/test_runtime" "[big]" --durations yes
if want sanitize; then
  # racecheck several times: its slow shared-memory accesses skew the warpgroups' timing, which is
  # how a race between them shows (as a failed check with 0 hazards: the tool does not see the
  # tensor cores' and the copy engine's accesses).
  # initcheck only on request (SANITIZE_INITCHECK=1): it does not see writes by the bulk copy
  # engine, so it reports every read of memory that only bulk stores wrote, such as the sm90
  # family's dQ accumulator in the postprocess. initcheck_probe shows that on a buffer of its own
  # (docs/results/2026-12-03-h200-uniform-warpgroup.md); with SANITIZE_INITCHECK=1 it runs first.
  if [[ "${SANITIZE_INITCHECK:-0}" == 1 ]]; then
    for c in none st bulk-store memset-reduce; do
      stage "initcheck probe ($c)" 60 "$out/initcheck-probe-$c.log" compute-sanitizer --tool initcheck "$bin/initcheck_probe" "$c"
      echo "initcheck probe ($c): $(grep -h -m1 'ERROR SUMMARY' "$out/initcheck-probe-$c.log") (expected: errors for none and bulk-store only)" | tee -a "$summary"
    done
  fi
  for name in memcheck $(seq -f "racecheck-%g" "${RACECHECK_RUNS:-3}") synccheck \
    $([[ "${SANITIZE_INITCHECK:-0}" == 1 ]] && echo initcheck); do
    stage "sanitize ($name)" "${SANITIZE_LIMIT_S:-300}" "$out/sanitize-$name.log" \
      compute-sanitizer --tool "${name%-*}" --error-exitcode 1 "$bin/test_runtime" "[sanitize]"
  done
  for name in ${SANITIZE_SPEC_TOOLS:-memcheck synccheck}; do
    stage "sanitize specialized ($name)" "${SANITIZE_LIMIT_S:-300}" "$out/sanitize-specialized-$name.log" \
      compute-sanitizer --tool "$name" --error-exitcode 1 "$bin/rt_bench" specialized generated/manifest.json 0 \
      "${SANITIZE_SPECS:-d64_causal}"
  done
fi
want codegen && stage "codegen (specialized vs generic)" "${CODEGEN_LIMIT_S:-150}" "$out/specialized.txt" \
  "$bin/rt_bench" specialized generated/manifest.json "${CODEGEN_ROUNDS:-7}"
want grid && stage "grid determinism" "${GRID_LIMIT_S:-240}" "$out/grid.txt" "$bin/rt_bench" grid 10
if [[ "$what" == trace ]]; then
  tbin="${TRACE_BUILD:-build-trace}"
  for f in "$tbin/tests/runtime/test_runtime" "$tbin/tools/dash"; do
    [[ -x "$f" ]] || { echo "gpu.sh: error: $f not found (scripts/gpu.sh build-trace first)" >&2; exit 2; }
  done
  stage "trace test" "${TESTS_LIMIT_S:-180}" "$out/trace-test.log" "$tbin/tests/runtime/test_runtime" "kernel traces*"
  traces=()
  for shape in ${TRACE_SHAPES:-128/8192/causal 128/8192/full 64/4096/causal}; do
    IFS=/ read -r d s m <<< "$shape"
    name="trace-d$d-$m-$s"
    stage "trace $shape" "${TRACE_LIMIT_S:-120}" "$out/$name.txt" "$tbin/tools/dash" bench --kernel "${TRACE_KERNEL:-sm90}" \
      --strategies "${TRACE_STRATEGY:-symmetric-shift}" --modes det --head-dim "$d" --seqlen "$s" --mask "$m" \
      --batch $((16384 / s)) --heads $((2048 / d)) --trace "$out/$name.json" --svg "$out/$name.svg"
    [[ -f "$out/$name.json" ]] && traces+=("$out/$name.json")
  done
  if [[ ${#traces[@]} -gt 0 ]]; then
    stage "calibrate" 300 "$out/calibrate.txt" "$tbin/tools/dash" calibrate "${traces[@]}" --out "$out/calibrated.json"
    cat "$out/calibrate.txt"
  fi
  grep -h "^trace:" "$out"/trace-*.txt
fi
if want bench; then
  s0=$SECONDS
  DASH_BIN="$build/tools/dash" DASH_COMMIT="$commit" OUT="$out/bench" \
    scripts/bench.sh --kernels "${BENCH_KERNELS:-sm80,sm90}" --rounds "${BENCH_ROUNDS:-1}" > "$out/bench.txt" 2>&1
  rc=$?
  [[ $rc -ne 0 ]] && status=1
  echo "bench (dash + PyTorch SDPA): rc=$rc $((SECONDS - s0))s" | tee -a "$summary"
fi

echo "==== summary"
[[ -f "$out/tests.log" ]] && grep -E "^determinism:|test cases|assertions" "$out/tests.log" | tail -28
[[ -f "$out/tests-big.log" ]] && echo "[big]: $(grep -E "test cases|assertions" "$out/tests-big.log" | tail -1)"
for log in "$out"/sanitize-*.log; do
  [[ -f "$log" ]] && echo "$(basename "$log" .log): $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)" \
    "| $(grep -E "^All tests passed|^test cases" "$log" | tail -1)"
done
[[ -f "$out/specialized.txt" ]] && grep -v "rounds (generic" "$out/specialized.txt"
[[ -f "$out/grid.txt" ]] && tail -1 "$out/grid.txt"
cat "$summary"
[[ -f "$out/bench/bench.md" ]] && cat "$out/bench/bench.md"
exit $status
