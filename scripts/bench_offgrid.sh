#!/usr/bin/env bash
# Runs on the GPU machine: `dash bench` and FlashAttention-4 (scripts/bench_torch.py --offgrid) on
# the shapes where FA4's fixed deterministic order costs it most (head_dim 128, bf16): GQA 16/2
# causal and full, GQA 16/4 causal, a (1024, 0) sliding window, 2k queries on 16k keys. Same run,
# same GPU; prints the tables of scripts/bench_table.py last.
#   scripts/bench_offgrid.sh [--kernels sm90] [--strategies fa3,fa3-spt,symmetric-shift,search]
# Environment: DASH_BIN (default build-device/tools/dash), DASH_COMMIT, OUT (default out/offgrid),
# DASH_TIMEOUT / TORCH_TIMEOUT (seconds per tool run).
set -uo pipefail
cd "$(dirname "$0")/.."
bin="${DASH_BIN:-build-device/tools/dash}"
out="${OUT:-out/offgrid}"
kernels=sm90
strategies=fa3,fa3-spt,symmetric-shift,search
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kernels) [[ $# -ge 2 ]] || { echo "bench_offgrid.sh: error: $1 needs a value" >&2; exit 2; }; kernels="$2"; shift 2 ;;
    --strategies) [[ $# -ge 2 ]] || { echo "bench_offgrid.sh: error: $1 needs a value" >&2; exit 2; }; strategies="$2"; shift 2 ;;
    *) echo "bench_offgrid.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "bench_offgrid.sh: error: $bin not found (build the dash target for CUDA first)" >&2; exit 2; }
mkdir -p "$out"
commit="${DASH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
# batch heads kv_heads seqlen_q seqlen_k mask: scripts/bench_torch.py's OFFGRID, in its order.
shapes=("2 16 2 8192 8192 causal" "2 16 2 8192 8192 full" "2 16 4 8192 8192 causal"
        "2 16 16 8192 8192 window:1024,0" "4 16 16 2048 16384 causal")
status=0
dash_json=()
for kernel in ${kernels//,/ }; do
  n=0
  for shape in "${shapes[@]}"; do
    read -r b h hk sq sk mask <<< "$shape"
    n=$((n + 1))
    json="$out/dash-$kernel-$n.json"
    timeout "${DASH_TIMEOUT:-120}" "$bin" bench --kernel "$kernel" --batch "$b" --heads "$h" --kv-heads "$hk" \
      --seqlen "$sq" --seqlen-k "$sk" --head-dim 128 --mask "$mask" --strategies "$strategies" \
      --commit "$commit" --json "$json" >> "$out/dash.txt" 2>> "$out/dash.log"
    rc=$?
    [[ $rc -ne 0 ]] && { echo "bench_offgrid.sh: dash bench --kernel $kernel ($shape) failed (exit $rc)"; status=1; }
    dash_json+=(--dash "$json")
  done
done
cat "$out/dash.txt"
PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-300}" python3 scripts/bench_torch.py --offgrid --commit "$commit" \
  --json "$out/torch.json" 2>&1 | tee "$out/torch.log"
rc=${PIPESTATUS[0]}
[[ $rc -ne 0 ]] && { echo "bench_offgrid.sh: bench_torch.py --offgrid failed (exit $rc)"; status=1; }
python3 scripts/bench_table.py "${dash_json[@]}" --torch "$out/torch.json" | tee "$out/bench.md"
exit $status
