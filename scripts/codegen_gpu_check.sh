#!/usr/bin/env bash
# Specialized (generated/) vs generic backward kernel on a GPU, for the default set's shapes.
#   1. registers and spills of both (ptxas -v; no GPU needed);
#   2. two builds: this tree (generated kernels registered, dispatched when the schedule's hash
#      matches) and a copy without generated/*.cu (the generic, table-driven kernel only);
#   3. `dash bench` on the four default shapes with the strategy each kernel was made for, in both
#      builds; prints the kernel each run used and the median times side by side.
# Bitwise equality of specialized vs generic gradients is not checked here (dash bench does not
# expose the outputs): `rt_bench specialized` does that, and times both in one binary
# (scripts/gpu.sh codegen). Usage: scripts/codegen_gpu_check.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(realpath -m "${1:-codegen_gpu_check}")
mkdir -p "$out"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}

echo "== registers (sm_90a, ptxas -v)"
: > "$out/ptxas.txt"
for f in runtime/kernels/sm80/generic.cu generated/*.cu; do
  if ! "$nvcc" -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -c "$f" -o "$out/kernel.o" \
      -Xptxas -v >> "$out/ptxas.txt" 2>&1; then
    tail -20 "$out/ptxas.txt"; exit 1
  fi
done
scripts/ptxas_summary.py --arch sm_90a "$out/ptxas.txt"

echo "== builds"
cmake -S . -B "$out/build-generated" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_PERF=OFF > /dev/null
cmake --build "$out/build-generated" --target dash --parallel "$(nproc)" > /dev/null
generic_src="$out/src-generic"
rm -rf "$generic_src"
mkdir -p "$generic_src"
git ls-files -z | grep -zv '^generated/.*\.cu$' | xargs -0 -I{} cp --parents {} "$generic_src"
cmake -S "$generic_src" -B "$out/build-generic" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDASH_PERF=OFF > /dev/null
cmake --build "$out/build-generic" --target dash --parallel "$(nproc)" > /dev/null

echo "== bench"
python3 - "$root/generated/manifest.json" > "$out/shapes.txt" <<'PY'
import json, sys
for k in json.load(open(sys.argv[1]))["kernels"]:
    print(k["head_dim"], k["mask"], k["seqlen_q"], k["q_heads"] * k["head_dim"], k["strategy"])
PY
while read -r d mask seqlen hidden strategy; do
  for build in generated generic; do
    "$out/build-$build/tools/dash" bench --strategies "$strategy" --modes det --head-dims "$d" \
      --seqlens "$seqlen" --masks "$mask" --total-tokens "$seqlen" --hidden "$hidden" \
      --json "$out/bench_${build}_d${d}_${mask}.json" > /dev/null
  done
done < "$out/shapes.txt"
python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
print(f"{'shape':<16} {'kernel (generated build)':<26} {'ms':>8} {'kernel (generic build)':<24} {'ms':>8}")
for path in sorted(glob.glob(os.path.join(out, "bench_generated_*.json"))):
    shape = os.path.basename(path)[len("bench_generated_"):-5]
    def first(p):
        doc = json.load(open(p))
        rows = doc if isinstance(doc, list) else doc.get("results", [doc])
        return rows[0]
    a = first(path)
    b = first(os.path.join(out, f"bench_generic_{shape}.json"))
    print(f"{shape:<16} {a.get('kernel', '?'):<26} {a.get('ms') or 0:8.3f} {b.get('kernel', '?'):<24} {b.get('ms') or 0:8.3f}")
PY
