#!/usr/bin/env bash
# CTest driver: OpenClaw's own CLI (openclaw@2026.9.6 on Node 24, installed once into a cache
# folder) calls health, status, sessions.*, chat.send and chat.history on a sessionrt gateway
# started here on a temp state dir; openclaw_cli.mjs asserts on the JSON each call prints.
# Exit 77 (CTest "Skipped") only when npm is unreachable for the first install.
set -uo pipefail
sessionrt=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/openclaw_install.sh"
work=$(mktemp -d)
trap 'kill "$gw_pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$here/openclaw_gateway_up.sh"
mkdir -p "$work/home"  # an empty HOME: no OpenClaw config or device identity of the user's
node "$here/openclaw_cli.mjs" "$oc_node" "$oc_cli" "$gw_port" "$gw_token" "$work/home"
rc=$?
gw_down || rc=1
[ $rc -eq 0 ] || { echo "--- gateway log"; tail -50 "$gw_log"; }
exit $rc
