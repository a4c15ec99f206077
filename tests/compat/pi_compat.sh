#!/usr/bin/env bash
# CTest driver for the pi compatibility test: installs @mariozechner/pi-coding-agent (pinned)
# into a cache folder once, writes transcripts with sessionrt, and runs pi_compat.mjs.
# Exit 77 (shown by CTest as "Skipped") only when the npm registry cannot be reached.
set -uo pipefail
sessionrt=$1 writer=$2
here=$(cd "$(dirname "$0")" && pwd)
cache=${SESSIONRT_COMPAT_CACHE:-$HOME/.cache/sessionrt-compat}
pkg="@mariozechner/pi-coding-agent@0.73.1"
if [ ! -f "$cache/node_modules/@mariozechner/pi-coding-agent/package.json" ]; then
  mkdir -p "$cache" && echo '{"name":"sessionrt-compat","private":true}' > "$cache/package.json"
  if ! (cd "$cache" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$pkg" >&2); then
    if ! npm ping >/dev/null 2>&1; then
      echo "SKIPPED: the npm registry is unreachable, cannot install $pkg" >&2
      exit 77
    fi
    echo "FAILED: npm install $pkg" >&2
    exit 1
  fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ours" "$work/scratch"
"$writer" "$work/ours" || exit 1
node "$here/pi_compat.mjs" "$cache" "$sessionrt" "$work/ours" "$work/scratch"
rc=$?
if [ $rc -ne 0 ]; then
  for f in "$work"/scratch/*.json; do [ -f "$f" ] && { echo "--- $f"; head -c 3000 "$f"; echo; }; done
fi
exit $rc
