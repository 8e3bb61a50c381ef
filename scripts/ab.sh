#!/usr/bin/env bash
# Runs on the GPU machine: A/B timing of prebuilt variants (scripts/variant.sh), one after the other
# in the same call, optionally after the full GPU tests of one of them, and optionally an Nsight
# Compute profile of the backward main kernel of one variant (stall reasons, tensor-pipe activity).
# Usage: scripts/ab.sh "DIR1 DIR2 ..." TEST_DIR|none SHAPE...   (SHAPE as rt_bench: D/S/MASK; ROUNDS=N
#        interleaves N rounds of the variants, default 1, and tables them with scripts/ab_rounds.py)
#        scripts/ab.sh profile DIR SKIP SHAPE   (SKIP: main-kernel launches to skip; rt_bench shapes
#        runs 13 backwards per strategy, the 5 named strategies first, then fa3 atomic: 3 = the
#        first timed det run, 68 = the first timed atomic one)
# KERNEL_REGEX picks the profiled kernel (default: either family's backward main kernel).
# Logs under $OUT (or ./out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [[ "${1:-}" == profile ]]; then
  [[ $# -eq 4 ]] || { echo "ab.sh: error: usage: scripts/ab.sh profile DIR SKIP SHAPE" >&2; exit 2; }
  dir=$2 skip=$3 shape=$4 rep=/tmp/dash-profile
  timeout -k 5 "${PROFILE_LIMIT_S:-200}" ncu --clock-control none -k "regex:${KERNEL_REGEX:-bwd_(main_)?kernel}" --launch-skip "$skip" \
    --launch-count 1 --set full --import-source yes -f -o "$rep" "$dir/rt_bench" shapes "$shape" > /dev/null 2>&1
  echo "ncu rc=$?"
  ncu -i "$rep.ncu-rep" --page details > "$out/profile.details.txt" 2>&1
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2>&1 | gzip > "$out/profile.sass.csv.gz"
  ncu -i "$rep.ncu-rep" --page raw --csv > "$rep.raw.csv" 2>&1
  python3 - "$rep.raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
d = dict(zip(rows[0], rows[2]))
st = [(h, float(v.replace(',', '') or 0)) for h, v in d.items()
      if 'smsp__pcsamp_warps_issue_stalled' in h and not h.endswith('not_issued')]
tot = sum(v for _, v in st) or 1.0
print('stalls:', ' '.join(f"{h[33:]}={v / tot * 100:.1f}%" for h, v in sorted(st, key=lambda x: -x[1])[:10]))
for k in ('gpu__time_duration.sum', 'sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active',
          'smsp__inst_executed.sum', 'launch__registers_per_thread'):
    print(k, d.get(k))
PY
  exit 0
fi
[[ $# -ge 3 ]] || { echo "ab.sh: error: usage: scripts/ab.sh \"DIRS\" TEST_DIR|none SHAPE..." >&2; exit 2; }
dirs=$1 tdir=$2; shift 2
if [[ "$tdir" != none ]]; then
  s0=$SECONDS
  timeout -k 5 "${TESTS_LIMIT_S:-200}" "$tdir/test_runtime" > "$out/tests.log" 2>&1
  echo "tests $tdir: rc=$? $((SECONDS - s0))s"; grep -E "^determinism:|test cases" "$out/tests.log" | tail -14
fi
timing() { echo "$out/timing_$(basename "$1").txt"; }  # one file per variant, every round's lines
files=()
for d in $dirs; do files+=("$(timing "$d")"); : > "${files[-1]}"; done
for ((r = 1; r <= ${ROUNDS:-1}; ++r)); do
  for d in $dirs; do
    echo "== $d round $r"
    timeout -k 5 "${BENCH_LIMIT_S:-120}" "$d/rt_bench" shapes "$@" 2>&1 | tee -a "$(timing "$d")"
  done
done
scripts/ab_rounds.py "${files[@]}"
