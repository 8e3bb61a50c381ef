#!/usr/bin/env bash
# dash generate on bad input: exit code 2, exactly one line on stderr, nothing written.
# Usage: cli_errors_check.sh DASH
set -uo pipefail
dash=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
echo '{"broken": ' > bad.json
echo 'garbage' > bad.cu
fail=0
expect_refused() {
  "$dash" generate "$@" > stdout.txt 2> stderr.txt
  local rc=$?
  local lines
  lines=$(wc -l < stderr.txt)
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ -e out ]; then
    echo "FAIL (rc=$rc, $lines stderr lines, out exists: $([ -e out ] && echo yes || echo no)): $*"
    cat stderr.txt
    fail=1
  fi
  rm -rf out
}
small=(--heads 2 --seqlen 1024 --sms 8)
expect_refused "${small[@]}" --strategy bogus --out out
expect_refused --schedule bad.json --out out
expect_refused "${small[@]}" --template bad.cu --out out
expect_refused "${small[@]}" --template missing.cu --out out
expect_refused "${small[@]}" --dtype fp8 --out out
expect_refused "${small[@]}" --kernel sm70 --out out
expect_refused "${small[@]}" --seqlens 512,1024 --batch 2 --out out
expect_refused --default-set --heads 3 --out out
expect_refused "${small[@]}" --out missing/out
"$dash" generate "${small[@]}" --strategy auto --out out > /dev/null || { echo "FAIL: a valid run"; fail=1; }
[ "$(ls out | wc -l)" -eq 3 ] || { echo "FAIL: a valid run should write 3 files"; fail=1; }
exit $fail
