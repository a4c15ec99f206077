#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test: unit and
# compatibility tests (CTest), the kill -9 crash test (20 kills), the installed package with an
# out-of-tree host, and a short fuzz run.
#   scripts/test.sh            the default run (what CI runs)
#   scripts/test.sh --long     soak: 1000 kills per appender crash test (100 for the runtime one), 10 minutes per fuzz
#                              target, 10 rounds of the cluster harness's scenarios, and any test labelled long
# The build dir and its configuration are scripts/demo.sh's (SESSIONRT_BUILD_DIR, default build;
# -DSESSIONRT_WERROR=ON), so a test run after the demo rebuilds nothing the demo built.
set -euo pipefail
cd "$(dirname "$0")/.."
long=0
[ "${1:-}" = "--long" ] && long=1
./scripts/setup.sh
jobs=${SESSIONRT_JOBS:-$(nproc)}
build=${SESSIONRT_BUILD_DIR:-build}
# The one configuration, the same as scripts/demo.sh's (keep the two in step).
cmake -S . -B "$build" -G Ninja -DSESSIONRT_WERROR=ON >/dev/null
cmake --build "$build" -j "$jobs"
if [ $long = 1 ]; then export SESSIONRT_CRASH_KILLS=1000; fi
# The ownership harness (tests/cluster/cluster_harness_test.cpp): its scenarios under traffic, 10 rounds
# (20 kill -9, 10 each of SIGTERM, SIGSTOP and etcd restart) at random moments on random nodes.
if [ $long = 1 ]; then export SESSIONRT_CLUSTER_ROUNDS=10; fi
# Tests labelled long run only with --long.
if [ $long = 1 ]; then ctest --test-dir "$build" --output-on-failure -j "$jobs"
else ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE long; fi
./scripts/install_check.sh "$build"   # the installed package, and a host built out of tree against it
if [ $long = 1 ]; then ./scripts/fuzz.sh --seconds 600; else ./scripts/fuzz.sh --seconds 30; fi
echo "[test] all tests passed"
