#!/usr/bin/env bash
# Installs every build and test dependency of DASH from Debian packages. Idempotent.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git python3
  libfmt-dev libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev
  clang-22 libclang-22-dev llvm-22-dev libclang-rt-22-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
