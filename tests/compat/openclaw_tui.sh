#!/usr/bin/env bash
# CTest driver: OpenClaw's TUI (openclaw@2026.9.6 on Node 24, installed once into a cache
# folder) against a sessionrt gateway started here, driven in tmux with send-keys and read with
# capture-pane: the history of a session written before it starts is shown, a message typed in
# it is sent, the streamed reply appears on the screen, and `/reset` starts a new session (the
# store's sessionId for the key changes). Exit 77 only when npm is unreachable for the install.
set -uo pipefail
sessionrt=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v tmux >/dev/null || { echo "FAILED: tmux is missing (scripts/setup.sh installs it)" >&2; exit 1; }
source "$here/openclaw_install.sh"
work=$(mktemp -d)
tmux_sock=$work/tmux.sock
trap 'tmux -S "$tmux_sock" kill-server 2>/dev/null; kill "$gw_pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$here/openclaw_gateway_up.sh"
mkdir -p "$work/home"
fail() { echo "FAILED: $*" >&2; echo "--- screen" >&2; screen >&2; echo "--- gateway log" >&2; tail -30 "$gw_log" >&2; exit 1; }
screen() { tmux -S "$tmux_sock" capture-pane -p -t tui -S -200 2>/dev/null; }
# Waits (bounded) until the screen shows `text`.
wait_screen() {
  local text=$1 secs=${2:-60}
  for _ in $(seq 1 $((secs * 5))); do
    screen | grep -qF -- "$text" && return 0
    sleep 0.2  # polling the terminal for what the TUI draws, bounded
  done
  fail "the TUI did not show \"$text\" within $secs s"
}
sid() { "$sessionrt" sessions --state-dir "$work/state" --token "$gw_token" --json |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s).sessions.find(x=>x.key==="agent:main:main");console.log(r?r.sessionId:"")})'; }

# History written before the TUI starts, through the gateway by sessionrt's own CLI.
"$sessionrt" send --state-dir "$work/state" --token "$gw_token" "history before the tui" >/dev/null ||
  fail "sessionrt send through the gateway"
before=$(sid)
[ -n "$before" ] || fail "no session row for agent:main:main after sessionrt send"

tmux -S "$tmux_sock" new-session -d -s tui -x 160 -y 48 \
  "env -i PATH=$PATH HOME=$work/home TERM=xterm-256color $oc_node $oc_cli tui --url ws://127.0.0.1:$gw_port --token $gw_token"
wait_screen "history before the tui" 90
tmux -S "$tmux_sock" send-keys -t tui "typed in the tui" Enter
wait_screen "typed in the tui" 30
# The simulated model's reply quotes the message ("typed in the tui" (ref ...)); it reaches the
# TUI as chat delta events and then the final one.
wait_screen '"typed in the tui" (ref' 60
tmux -S "$tmux_sock" send-keys -t tui "/reset" Enter
for _ in $(seq 1 150); do
  after=$(sid)
  [ -n "$after" ] && [ "$after" != "$before" ] && break
  sleep 0.2
done
[ -n "$after" ] && [ "$after" != "$before" ] || fail "/reset in the TUI did not start a new session (sessionId $before -> $after)"
echo "ok: history shown, message sent, streamed reply shown, /reset gave session $after (was $before)"
tmux -S "$tmux_sock" kill-server 2>/dev/null
gw_down || exit 1
exit 0
