#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each one for a while on a seed
# corpus made from tests/vectors (tests/vectors/sse for the provider streams). A crash fails the script and leaves the input in build-fuzz/.
#   scripts/fuzz.sh [--seconds N]     (default 30 per target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30
[ "${1:-}" = "--seconds" ] && seconds=$2
./scripts/setup.sh
CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DSESSIONRT_FUZZ=ON -DSESSIONRT_BENCH=OFF >/dev/null
targets=$(cd fuzz && ls *_fuzz.cpp | sed 's/_fuzz.cpp$//; s/^/fuzz_/')
cmake --build build-fuzz -j "${SESSIONRT_JOBS:-$(nproc)}" --target $targets
for t in $targets; do
  corpus=build-fuzz/corpus-$t
  mkdir -p "$corpus"
  cp tests/vectors/*.json* "$corpus/" 2>/dev/null || true
  # Provider streams as the fake providers send them (a piece-size byte, then the body).
  if [ "$t" = fuzz_provider_stream ]; then cp tests/vectors/sse/*.sse "$corpus/"; fi
  # A target's own seeds, when it has some (fuzz/seeds/<name>/).
  if [ -d "fuzz/seeds/${t#fuzz_}" ]; then cp "fuzz/seeds/${t#fuzz_}"/* "$corpus/"; fi
  echo "[fuzz] $t for ${seconds}s"
  (cd build-fuzz && "./fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 "corpus-$t" 2>"$t.log") || {
    tail -40 "build-fuzz/$t.log"; echo "[fuzz] $t FAILED (see build-fuzz/$t.log)"; exit 1; }
  grep -E "stat::number_of_executed_units" "build-fuzz/$t.log" | sed "s/^/[fuzz] $t /"
done
