#!/usr/bin/env bash
# Builds the tests with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/) and runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build-asan -G Ninja -DSESSIONRT_WERROR=ON -DSESSIONRT_SANITIZE=ON -DSESSIONRT_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j "${SESSIONRT_JOBS:-$(nproc)}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$PWD/scripts/ubsan.supp
ctest --test-dir build-asan --output-on-failure -j "${SESSIONRT_JOBS:-$(nproc)}" "$@"
