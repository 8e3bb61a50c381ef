#!/bin/bash
# GPU machine (FA4 part b carried; part a staged by the call before): sustained load. d128 8k causal
# and full: ours det / non-det (dash bench, one strategy, ITERS timed calls back to back) and
# FlashAttention-4 det / non-det (bench_torch.py, ITERS calls), each series its own process, the SM
# clock, power and throttle reasons sampled every 100 ms; then the GPU tests of the carried build.
t0=$SECONDS
bash "$(ls .peers/*/install.sh | head -1)" .peers 2>&1 | tail -1
export PYTHONPATH=/tmp/fa4site:/tmp/fa4site/nvidia_cutlass_dsl/dsl_packages
bash .carry/unpack.sh
R=/tmp/s2; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $R/clocks.csv 2>&1 &
SMI=$!
D=build-device/tools/dash
N=${ITERS:-1500}
C=${COMMIT:-HEAD}
mark() { echo "$(date +%s.%N) $*" >> $R/phases.txt; }
ours() {  # mask strategy mode
  local n=ours-$1-$3; mark start $n
  timeout 120 $D bench --kernel sm90 --head-dims 128 --seqlens 8192 --masks $1 --strategies $2 --modes $3 --iters $N --commit $C --json $R/$n.json > $R/$n.txt 2>&1
  echo "$n rc=$? $((SECONDS-t0))s"; mark end $n; sleep ${GAP_S:-5}
}
fa4() {  # mask backend
  local n=$2-$1; mark start $n
  PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench_torch.py --head-dims 128 --seqlens 8192 --masks $1 --backends $2 --iters $N --commit $C --json $R/$n.json > $R/$n.log 2>&1
  echo "$n rc=$? $((SECONDS-t0))s"; mark end $n; sleep ${GAP_S:-5}
}
ours causal symmetric-shift det; fa4 causal fa4-det; fa4 causal fa4; ours causal descending nondet
ours full symmetric-shift det; fa4 full fa4-det; fa4 full fa4; ours full fa3 nondet
kill $SMI
tar czf $OUT/s2.tgz -C /tmp s2
if [ $((SECONDS-t0)) -lt ${TEST_BEFORE_S:-400} ]; then
  timeout 150 build-device/tests/runtime/test_runtime > $OUT/tests.log 2>&1; echo "tests rc=$? $((SECONDS-t0))s"
  grep -E "^determinism:|test cases|assertions|FAILED" $OUT/tests.log | tail -8
fi
