#!/usr/bin/env bash
# Regenerates the default set into a temporary directory and compares it byte for byte with the
# checked-in generated/ (same file list, same bytes). Usage: regenerate_check.sh DASH GENERATED_DIR
set -euo pipefail
dash=$1
expected=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dash" generate --default-set --out "$tmp/generated" > /dev/null
diff -r "$expected" "$tmp/generated"
echo "generated/ matches a fresh regeneration ($(ls "$expected" | wc -l) files)"
