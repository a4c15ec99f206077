#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo against a fresh state dir.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "${SESSIONRT_JOBS:-$(nproc)}" --target sessionrt
./build/sessionrt demo "$@"
