#!/usr/bin/env bash
# Runs on the GPU machine: the durations of the three kernels of one backward call (preprocess,
# main kernel, postprocess) of the deterministic symmetric-shift schedule on the 24 DASH grid
# shapes, three timed calls each (Nsight Compute, one metric, clocks as they are), into one file
# that scripts/kernel_times.py tables next to the cost model. Splits a call's time the way the
# model does (makespan for the main kernel, prepost_cycles for the passes around it).
# Usage: scripts/kernel_times.sh RT_BENCH   (a scripts/variant.sh or scripts/gpu.sh build binary);
#        the file is $OUT/kernel_times.csv (OUT default: out)
set -uo pipefail
[[ $# -eq 1 && -x "$1" ]] || { echo "kernel_times.sh: error: usage: scripts/kernel_times.sh RT_BENCH (an executable)" >&2; exit 2; }
bin=$1 out=${OUT:-out}; mkdir -p "$out"
file="$out/kernel_times.csv" one="$out/kernel_times.one"
: > "$file"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | sed 's/^/# gpu: /' | tee -a "$file"
for d in 64 128; do for m in full causal; do for s in 512 1024 2048 4096 8192 16384; do
  # rt_bench runs 3 warm-up calls, then 10 timed ones, each three kernels: skip 9, take 9.
  timeout 90 ncu --clock-control none --csv --page raw -k regex:"process_kernel|bwd_kernel|bwd_main_kernel" \
    --launch-skip 9 --launch-count 9 --metrics gpu__time_duration.sum \
    "$bin" shapes "$d/$s/$m" --strategies=symmetric-shift > "$one" 2>&1
  echo "$d $s $m rc=$? kernels=$(grep -c '^"[0-9]' "$one")"
  { echo "## $d $s $m"; cat "$one"; } >> "$file"
done; done; done
rm -f "$one"
