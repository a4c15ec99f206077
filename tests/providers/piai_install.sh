#!/usr/bin/env bash
# Installs the reference client @mariozechner/pi-ai@0.73.1 (pinned) from npm into a cache folder
# once, as tests/compat/pi_compat.sh installs pi, and prints the node_modules folder that holds it
# (the only line on stdout; npm's own output goes to stderr). Idempotent and quiet when present.
#   usage:   nm=$(tests/providers/piai_install.sh) || exit $?
#            node tests/providers/piai_stream.mjs --piai "$nm" ...   (or PIAI_NODE_MODULES=$nm)
# Cache: ${SESSIONRT_COMPAT_CACHE:-~/.cache/sessionrt-compat}/piai
# Exit 77 (CTest "Skipped") only when the npm registry cannot be reached; any other failure is 1.
set -uo pipefail
piai_cache=${SESSIONRT_COMPAT_CACHE:-$HOME/.cache/sessionrt-compat}/piai
piai_pkg="@mariozechner/pi-ai@0.73.1"
piai_marker="$piai_cache/.installed-mariozechner-pi-ai-0.73.1"
piai_nm="$piai_cache/node_modules"

if [ ! -f "$piai_marker" ] || [ ! -f "$piai_nm/@mariozechner/pi-ai/package.json" ]; then
  command -v npm >/dev/null 2>&1 || { echo "SKIPPED: npm is not installed, cannot install $piai_pkg" >&2; exit 77; }
  mkdir -p "$piai_cache" || exit 1
  # Tests may start at once (ctest -j): one installs while the others wait (bounded by timeout);
  # the marker, written after a complete install, says the cache is usable.
  exec 9>"$piai_cache/.install.lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 600 9 || { echo "FAILED: timed out waiting for $piai_cache/.install.lock" >&2; exit 1; }
  fi
  if [ ! -f "$piai_marker" ] || [ ! -f "$piai_nm/@mariozechner/pi-ai/package.json" ]; then
    rm -rf "$piai_nm" "$piai_cache/package-lock.json" "$piai_marker"
    echo '{"name":"sessionrt-compat-piai","private":true}' > "$piai_cache/package.json"
    if ! (cd "$piai_cache" && timeout 900 npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$piai_pkg" >&2); then
      if ! timeout 60 npm ping >/dev/null 2>&1; then
        echo "SKIPPED: the npm registry is unreachable, cannot install $piai_pkg" >&2
        exit 77
      fi
      echo "FAILED: npm install $piai_pkg" >&2
      exit 1
    fi
    [ -f "$piai_nm/@mariozechner/pi-ai/dist/index.js" ] || { echo "FAILED: $piai_pkg missing after install" >&2; exit 1; }
    touch "$piai_marker"
  fi
  exec 9>&-
fi
echo "$piai_nm"
