#!/usr/bin/env bash
# CTest driver: OpenClaw's TUI (openclaw@2026.9.6 on Node 24, installed once into a cache
# folder by openclaw_install.sh) against `sessionrt gateway --config FILE` whose config names a
# model of tests/providers/fake_provider.mjs as OpenClaw configures one:
#   models.providers.fake = {baseUrl: http://127.0.0.1:N/v1, apiKey: "${FAKE_KEY}",
#                            api: openai-completions, models: [{id: echo, ...}]}
#   agents.defaults.model.primary = fake/echo          (FAKE_KEY=test-key in the gateway's env)
# Checks: the gateway says at start which model serves (endpoint, where its key came from,
# never the key); a message typed in the TUI (driven in tmux with send-keys, read with
# capture-pane) gets the fake's streamed echo reply on the screen; `sessionrt send` through the
# same gateway prints the echo reply too; the fake saw the requests, with the right key and no
# API rule broken. Exit 77 only when npm is unreachable for the install.
set -uo pipefail
sessionrt=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v tmux >/dev/null || { echo "FAILED: tmux is missing (scripts/setup.sh installs it)" >&2; exit 1; }
command -v node >/dev/null || { echo "FAILED: node is missing (scripts/setup.sh installs it)" >&2; exit 1; }
source "$here/openclaw_install.sh"
work=$(mktemp -d)
tmux_sock=$work/tmux.sock
gw_pid=
fake_pid=
trap 'tmux -S "$tmux_sock" kill-server 2>/dev/null; [ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null;
      [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/home"
gw_log=$work/gateway.log
fake_log=$work/fake.log
screen() { tmux -S "$tmux_sock" capture-pane -p -t tui -S -200 2>/dev/null; }
fail() {
  echo "FAILED: $*" >&2
  echo "--- screen" >&2; screen >&2
  echo "--- gateway log" >&2; tail -30 "$gw_log" >&2 2>/dev/null
  echo "--- fake provider stderr" >&2; tail -10 "$fake_log" >&2 2>/dev/null
  exit 1
}
# Waits (bounded) until the screen shows `text`.
wait_screen() {
  local text=$1 secs=${2:-60}
  for _ in $(seq 1 $((secs * 5))); do
    screen | grep -qF -- "$text" && return 0
    sleep 0.2  # polling the terminal for what the TUI draws, bounded
  done
  fail "the TUI did not show \"$text\" within $secs s"
}

# The fake provider on a free port: its first stdout line is {"port":N}.
fifo=$work/fake.out
mkfifo "$fifo"
node "$here/../providers/fake_provider.mjs" --port 0 --key test-key --lifetime-s 900 >"$fifo" 2>"$fake_log" &
fake_pid=$!
exec 8<"$fifo"
IFS= read -r -t 30 first_line <&8 || fail "fake_provider.mjs printed no {\"port\":N} within 30 s"
exec 8<&-
fake_port=$(printf '%s' "$first_line" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).port))') ||
  fail "fake_provider.mjs said \"$first_line\", not {\"port\":N}"
fake_url="http://127.0.0.1:$fake_port"
stats() { curl -s --max-time 10 "$fake_url/__stats"; }

# The gateway's config, as OpenClaw writes one (the key by reference, never inline).
config=$work/sessionrt.json
cat >"$config" <<EOF
{
  "models": {
    "providers": {
      "fake": {
        "baseUrl": "$fake_url/v1",
        "apiKey": "\${FAKE_KEY}",
        "api": "openai-completions",
        "models": [{"id": "echo", "contextWindow": 32000, "maxTokens": 1024}]
      }
    }
  },
  "agents": {"defaults": {"model": {"primary": "fake/echo"}}}
}
EOF

# The gateway (as openclaw_gateway_up.sh starts it, plus --config and FAKE_KEY).
gw_token="compat-$RANDOM-$RANDOM"
gw_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
FAKE_KEY=test-key "$sessionrt" gateway --config "$config" --state-dir "$work/state" --bind 127.0.0.1 --port "$gw_port" \
  --token "$gw_token" >"$gw_log" 2>&1 &
gw_pid=$!
for _ in $(seq 1 300); do
  grep -q "listening on" "$gw_log" 2>/dev/null && break
  kill -0 "$gw_pid" 2>/dev/null || fail "sessionrt gateway exited at start"
  sleep 0.1  # polling the log for readiness, bounded at 30 s
done
grep -q "listening on" "$gw_log" || fail "sessionrt gateway did not listen within 30 s"
gw_down() {
  kill -TERM "$gw_pid" 2>/dev/null
  for _ in $(seq 1 300); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done  # bounded at 30 s
  if kill -0 "$gw_pid" 2>/dev/null; then
    kill -KILL "$gw_pid" 2>/dev/null
    wait "$gw_pid" 2>/dev/null
    gw_pid=
    fail "sessionrt gateway did not exit within 30 s of SIGTERM"
  fi
  wait "$gw_pid"
  local rc=$?
  gw_pid=
  [ $rc -eq 0 ] || fail "sessionrt gateway exited $rc on SIGTERM"
}

# It says which model serves, where its key came from, and never the key itself.
said="gateway: model: fake/echo: openai-completions at $fake_url/v1, key from \${FAKE_KEY}"
grep -qF -- "$said" "$gw_log" || fail "the gateway's log does not say \"$said\""
grep -q "test-key" "$gw_log" && fail "the gateway's log shows the key's value"

# `sessionrt send` through the gateway: the fake's reply is printed.
send_out=$("$sessionrt" send --state-dir "$work/state" --token "$gw_token" --timeout 60 "sent by sessionrt send" 2>&1) ||
  fail "sessionrt send through the gateway: $send_out"
printf '%s\n' "$send_out" | grep -qF "Echo: sent by sessionrt send" ||
  fail "sessionrt send printed no echo reply: $send_out"
printf '%s\n' "$send_out" | grep -qF "héllo 👋 — ünïcode ✓" ||
  fail "sessionrt send's reply lost its unicode: $send_out"

# The TUI: the history (sessionrt send's turn) is shown, a typed message gets the fake's reply.
tmux -S "$tmux_sock" new-session -d -s tui -x 160 -y 48 \
  "env -i PATH=$PATH HOME=$work/home TERM=xterm-256color LANG=C.UTF-8 $oc_node $oc_cli tui --url ws://127.0.0.1:$gw_port --token $gw_token"
wait_screen "Echo: sent by sessionrt send" 90
tmux -S "$tmux_sock" send-keys -t tui "typed in the tui" Enter
wait_screen "typed in the tui" 30
# The reply reaches the TUI as chat delta events, then the final one; the unicode may render
# oddly in the pane, so the ASCII part is matched.
wait_screen "Echo: typed in the tui" 60

# The fake saw the requests: right key, no rule broken, every stream completed.
s=$(stats)
[ -n "$s" ] || fail "the fake's /__stats did not answer"
printf '%s' "$s" | node -e '
  let t="";process.stdin.on("data",d=>t+=d).on("end",()=>{
    const s=JSON.parse(t);
    const bad=[];
    const oc=(s.byApi||{})["openai-completions"]||0;
    if (oc<2) bad.push(`${oc} openai-completions requests, expected >= 2 (sessionrt send, the TUI)`);
    if (Object.keys(s.rejected||{}).length) bad.push("rules broken: "+JSON.stringify(s.rejected));
    if (s.unauthorized) bad.push(`${s.unauthorized} unauthorized requests`);
    if (s.streamsCompleted<2) bad.push(`${s.streamsCompleted} streams completed`);
    if (bad.length){console.error(bad.join("; ")+"\n"+t);process.exit(1);}
  })' || fail "the fake's /__stats: $s"

echo "ok: gateway said \"$said\"; sessionrt send and the TUI both got the fake's streamed echo reply; fake stats $s"
tmux -S "$tmux_sock" kill-server 2>/dev/null
gw_down
exit 0
