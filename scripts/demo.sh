#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo: examples/embed_host embeds the runtime
# on a fresh state dir with the simulated model, holds a conversation across two channels and
# a group, a /new and a /status, and prints the replies and the lifecycle events.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "${SESSIONRT_JOBS:-$(nproc)}" --target embed_host sessionrt
./build/embed_host "$@"
