#!/usr/bin/env bash
# Sets up, builds (warnings as errors) and runs every test. GPU tests skip without a GPU. Then the
# CPU tests again, host code built with AddressSanitizer and UndefinedBehaviorSanitizer
# (DASH_SANITIZE, build-asan; CUDA and the code generator are left out of that build). Then the
# libFuzzer targets (tests/fuzz, clang 22), each for a bounded time from the committed corpus.
# The Python package (python/) is installed into build-venv/ and its CPU tests run after the C++
# tests (its GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON
cmake --build build --parallel "$(nproc)"
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" build-venv/bin/pip install -q --no-build-isolation \
  --disable-pip-version-check --no-deps --config-settings=cmake.define.DASH_WERROR=ON ./python
build-venv/bin/python -m pytest python/tests -q -p no:cacheprovider
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DDASH_WERROR=ON -DDASH_SANITIZE=ON \
  -DDASH_CUDA=OFF -DDASH_CODEGEN=OFF -DDASH_PERF=OFF
cmake --build build-asan --parallel "$(nproc)"
ctest --test-dir build-asan --output-on-failure --parallel "$(nproc)"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22 -DDASH_WERROR=ON -DDASH_SANITIZE=ON -DDASH_FUZZ=ON -DDASH_CUDA=OFF \
  -DDASH_CODEGEN=OFF -DDASH_PERF=OFF
cmake --build build-fuzz --parallel "$(nproc)" --target fuzz_schedule fuzz_cli_flags
ctest --test-dir build-fuzz -L fuzz --output-on-failure
