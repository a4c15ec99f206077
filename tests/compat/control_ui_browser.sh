#!/usr/bin/env bash
# CTest driver (issue #33): OpenClaw's web Control UI, from the openclaw@2026.9.6 package that
# openclaw_install.sh installs, served by `sessionrt gateway --control-ui DIR` and used in headless
# Chromium (Debian's chromium-headless-shell) over the DevTools protocol by
# control_ui_browser.mjs (on the compat Node 24: its built-in WebSocket). The model is
# tests/providers/fake_provider.mjs's echo, streamed in pieces 100 ms apart so that a reply
# visibly grows and can be stopped. Two sessions are seeded first through the gateway. An identity
# link to a telegram id gives sessionrt a /dock-telegram command, which OpenClaw's UI does not
# know by itself: its command menu lists it only from sessionrt's chat metadata.
# Screenshots and the UI's WebSocket frames are kept in $SESSIONRT_CONTROL_UI_OUT (default
# build/control-ui-browser/ next to the binary).
# Exit 77 (CTest "Skipped") when no Chromium is installed or npm is unreachable for the install.
set -uo pipefail
sessionrt=$1
here=$(cd "$(dirname "$0")" && pwd)
browser=""
for candidate in chromium-headless-shell chromium; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
[ -n "$browser" ] || { echo "SKIPPED: no Chromium installed (apt-get install chromium-headless-shell)"; exit 77; }
command -v node >/dev/null || { echo "FAILED: node is missing (scripts/setup.sh installs it)" >&2; exit 1; }
source "$here/openclaw_install.sh"
ui_dir=$oc_cache/node_modules/openclaw/dist/control-ui
[ -f "$ui_dir/index.html" ] || { echo "FAILED: $ui_dir/index.html missing after the install" >&2; exit 1; }
out=${SESSIONRT_CONTROL_UI_OUT:-$(dirname "$sessionrt")/control-ui-browser}
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)
gw_pid=
fake_pid=
trap '[ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null; [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$work"' EXIT
gw_log=$out/gateway.log
fake_log=$work/fake.log
fail() { echo "FAILED: $*" >&2; echo "--- gateway log" >&2; tail -40 "$gw_log" >&2 2>/dev/null; exit 1; }

# The fake provider, streaming its echo in 48 pieces 100 ms apart (about 5 s a reply).
fifo=$work/fake.out
mkfifo "$fifo"
node "$here/../providers/fake_provider.mjs" --port 0 --key test-key --lifetime-s 900 --piece-delay-ms 100 \
  >"$fifo" 2>"$fake_log" &
fake_pid=$!
exec 8<"$fifo"
IFS= read -r -t 30 first_line <&8 || fail "fake_provider.mjs printed no {\"port\":N} within 30 s"
exec 8<&-
fake_port=$(printf '%s' "$first_line" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).port))')
config=$work/sessionrt.json
cat >"$config" <<JSON
{
  "models": {"providers": {"fake": {"baseUrl": "http://127.0.0.1:$fake_port/v1", "apiKey": "\${FAKE_KEY}",
    "api": "openai-completions", "models": [{"id": "echo", "contextWindow": 32000, "maxTokens": 1024}]}}},
  "agents": {"defaults": {"model": {"primary": "fake/echo"}}},
  "session": {"identityLinks": {"alice": ["telegram:123"]}}
}
JSON

gw_token="ui-$RANDOM-$RANDOM"
gw_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
FAKE_KEY=test-key "$sessionrt" gateway --config "$config" --state-dir "$work/state" --bind 127.0.0.1 --port "$gw_port" \
  --token "$gw_token" --control-ui "$ui_dir" >"$gw_log" 2>&1 &
gw_pid=$!
for _ in $(seq 1 300); do
  grep -q "listening on" "$gw_log" 2>/dev/null && break
  kill -0 "$gw_pid" 2>/dev/null || fail "sessionrt gateway exited at start"
  sleep 0.1  # polling the log for readiness, bounded at 30 s
done
grep -q "listening on" "$gw_log" || fail "sessionrt gateway did not listen within 30 s"
grep -q "serving the Control UI from $ui_dir" "$gw_log" || fail "the gateway did not say which Control UI it serves"

# Seed: the main session with one exchange, another labelled "Seeded other".
"$oc_node" --input-type=module -e '
const [url, token] = process.argv.slice(1);
const ws = new WebSocket(url); let n = 0; const pending = new Map();
ws.onmessage = (ev) => { const f = JSON.parse(ev.data); const p = pending.get(f.id);
  if (f.type === "res" && p) { pending.delete(f.id); f.ok ? p.res(f.payload) : p.rej(new Error(f.error.message)); } };
await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
const req = (method, params) => new Promise((res, rej) => { const id = `s${++n}`; pending.set(id, { res, rej });
  ws.send(JSON.stringify({ type: "req", id, method, params })); });
await req("connect", { minProtocol: 4, maxProtocol: 4, client: { id: "cli", version: "1.0.0", platform: "linux", mode: "cli" },
  role: "operator", scopes: ["operator.admin"], auth: { token } });
for (const [key, text] of [["agent:main:main", "seed main hello"], ["agent:main:other", "seed other hello"]])
  await req("chat.send", { sessionKey: key, message: text, idempotencyKey: `seed-${key}` });
await req("sessions.patch", { key: "agent:main:other", label: "Seeded other" });
for (let i = 0; i < 300; i++) {  // both seeded turns answered, bounded at 30 s
  const h = await req("chat.history", { sessionKey: "agent:main:other" });
  const m = await req("chat.history", { sessionKey: "agent:main:main" });
  if (h.messages.length >= 2 && m.messages.length >= 2) process.exit(0);
  await new Promise((r) => setTimeout(r, 100));
}
console.error("the seeded turns were not answered within 30 s"); process.exit(1);
' "ws://127.0.0.1:$gw_port" "$gw_token" || fail "seeding the sessions"

"$oc_node" "$here/control_ui_browser.mjs" "$browser" "http://127.0.0.1:$gw_port" "$gw_token" "$out"
rc=$?
kill -TERM "$gw_pid" 2>/dev/null
for _ in $(seq 1 300); do kill -0 "$gw_pid" 2>/dev/null || break; sleep 0.1; done  # bounded at 30 s
[ $rc -eq 0 ] || { echo "--- gateway log" >&2; tail -40 "$gw_log" >&2; }
echo "screenshots and frames: $out"
exit $rc
