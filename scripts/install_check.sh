#!/usr/bin/env bash
# Checks that sessionrt installs as a CMake package a host can use: configures a Release build
# in build-install/ (no benchmarks; tests have no option, so only the installed targets are
# built) — or, given a build dir that exists (scripts/test.sh passes its own), installs from
# that one without building anything more — installs it into a temporary prefix, checks that no warning flag of ours is exported,
# builds examples/out_of_tree against the prefix with find_package(sessionrt) and runs its host.
# Prints "[install] ok" at the end; any failure stops the script with a non-zero exit and says
# which step failed. The temporary prefix and host build are removed unless KEEP=1.
#   scripts/install_check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${SESSIONRT_JOBS:-$(nproc)}
work=$(mktemp -d "${TMPDIR:-/tmp}/sessionrt-install-XXXXXX")
prefix="$work/prefix"
step="start"
cleanup() {
  local rc=$?
  if [ $rc -ne 0 ]; then echo "[install] FAILED at: $step (exit $rc; files in $work)" >&2; return; fi
  [ "${KEEP:-0}" = 1 ] && echo "[install] kept $work" || rm -rf "$work"
}
trap cleanup EXIT
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}  # share the cache with the other build dirs
fi

build=${1:-}
if [ -z "$build" ]; then
  build=build-install
  step="configure build-install"
  cmake -S . -B build-install -G Ninja -DCMAKE_BUILD_TYPE=Release -DSESSIONRT_BENCH=OFF -DSESSIONRT_FUZZ=OFF \
    -DSESSIONRT_SANITIZE=OFF "${launcher[@]}" >/dev/null
fi
step="build the installed targets in $build"
cmake --build "$build" -j "$jobs" --target sessionrt_runtime sessionrt
step="install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

step="check the installed package"
for f in include/sessionrt/runtime/runtime.hpp include/sessionrt/messages/js_text.hpp \
         lib/libsessionrt_runtime.a lib/libsessionrt_messages.a lib/cmake/sessionrt/sessionrtConfig.cmake \
         lib/cmake/sessionrt/sessionrtConfigVersion.cmake lib/cmake/sessionrt/sessionrtTargets.cmake bin/sessionrt; do
  [ -e "$prefix/$f" ] || { echo "[install] missing $prefix/$f" >&2; exit 1; }
done
targets=("$prefix"/lib/cmake/sessionrt/sessionrtTargets*.cmake)
if grep -n -E 'INTERFACE_COMPILE_OPTIONS|-W(all|extra|error)' "${targets[@]}" >&2; then
  echo "[install] the exported targets carry our compile options (above); hosts must not get them" >&2
  exit 1
fi
if grep -n -F "$PWD" "$prefix"/lib/cmake/sessionrt/*.cmake >&2; then
  echo "[install] the package names a path inside the source tree (above)" >&2
  exit 1
fi

step="configure the out-of-tree host"
cmake -S examples/out_of_tree -B "$work/host" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >/dev/null
step="build the out-of-tree host"
cmake --build "$work/host" -j "$jobs"
step="run the out-of-tree host"
"$work/host/host"
echo "[install] ok"
