#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo scenario (examples/scenarios/demo.json):
# three simulated days of a small team's assistant on the virtual clock — 60 people on four
# channels and three groups, heartbeats, a nightly cron job, the daily reset across the DST
# change, an hour of ENOSPC and a crash — then prints its summary and where the report is.
#   ./scripts/demo.sh [SCENARIO.json] [--seed N] [--out DIR]     (DIR defaults to <build>/demo)
# Exit status: the simulation's (non-zero when an expectation failed, naming the step).
# It builds every default target (the CLI, the examples such as <build>/embed_host, the tests)
# in the build dir and configuration scripts/test.sh uses (-DSESSIONRT_WERROR=ON), so test.sh
# afterwards reuses this build instead of reconfiguring and rebuilding everything.
# SESSIONRT_BUILD_DIR picks the build dir (default build), SESSIONRT_JOBS the parallel jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SESSIONRT_BUILD_DIR:-build}
scenario=examples/scenarios/demo.json
out=$build/demo
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --seed) extra+=(--seed "$2"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *.json) scenario=$1; shift ;;
    *) echo "demo.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
./scripts/setup.sh
# The one configuration, the same as scripts/test.sh's (keep the two in step).
cmake -S . -B "$build" -G Ninja -DSESSIONRT_WERROR=ON >/dev/null
cmake --build "$build" -j "${SESSIONRT_JOBS:-$(nproc)}"
mkdir -p "$out"
rc=0
"./$build/sessionrt" simulate "$scenario" --report "$out/report.html" --json "$out/report.json" "${extra[@]}" || rc=$?
if [ -f "$out/report.html" ]; then
  echo
  echo "Open the report in a browser: file://$(realpath "$out/report.html") (its figures: $out/report.json)"
fi
exit $rc
