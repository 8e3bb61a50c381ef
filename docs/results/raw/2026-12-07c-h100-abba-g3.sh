#!/bin/bash
# GPU machine (FA4 part b carried; part a staged by the call before): the DASH grid, ours (device build
# of 9e2ddcf, the kernels of f9425b9 = HEAD's) and FlashAttention-4 det / non-det, in the order
# ours, FA4, FA4, ours per head dim (ABBA), the SM clock, power and throttle reasons sampled every
# 100 ms throughout.
t0=$SECONDS
bash "$(ls .peers/*/install.sh | head -1)" .peers 2>&1 | tail -1
export PYTHONPATH=/tmp/fa4site:/tmp/fa4site/nvidia_cutlass_dsl/dsl_packages
bash .carry/unpack.sh
R=/tmp/g3; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,memory.total --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $R/clocks.csv 2>&1 &
SMI=$!
D=build-device/tools/dash
mark() { echo "$(date +%s.%N) $*" >> $R/phases.txt; }
ours() { mark start dash-d$1-r$2; timeout 150 $D bench --kernel sm90 --head-dims $1 --commit 9e2ddcf --json $R/dash-d$1-r$2.json > $R/dash-d$1-r$2.txt 2> $R/dash-d$1-r$2.log; echo "dash d$1 r$2 rc=$? $((SECONDS-t0))s"; mark end dash-d$1-r$2; }
fa4() { mark start fa4-d$1-r$2; PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench_torch.py --head-dims $1 --backends fa4,fa4-det --commit 9e2ddcf --json $R/torch-d$1-r$2.json > $R/torch-d$1-r$2.log 2>&1; echo "fa4 d$1 r$2 rc=$? $((SECONDS-t0))s"; mark end fa4-d$1-r$2; }
for d in ${DIMS:-128 64}; do
  ours $d 1; fa4 $d 1; fa4 $d 2; ours $d 2
  for r in 1 2; do python3 scripts/bench_table.py --dash $R/dash-d$d-r$r.json --torch $R/torch-d$d-r$r.json > $R/bench-d$d-r$r.md 2>&1; done
  [ $((SECONDS-t0)) -gt ${STOP_S:-420} ] && break
done
kill $SMI
tar czf $OUT/g3.tgz -C /tmp g3
for f in $R/bench-d*-r*.md; do echo "== $f"; grep -A16 "vs FlashAttention-4" $f | head -18; done
