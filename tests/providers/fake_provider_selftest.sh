#!/usr/bin/env bash
# Self-test of the fake provider server (fake_provider.mjs) driven by the reference client pi-ai
# (piai_stream.mjs; pi-ai installed by piai_install.sh into the compat cache):
#   - each API x {echo, echo+crlf, tools (2 rounds via tools-2), thinking (+ a replay turn)}
#     through pi-ai, answers checked exactly;
#   - requests breaking a documented rule (sent with curl) get 400 in the API's error shape, a
#     wrong key gets 401, /__requests redacts keys, /__stats counts rejections and client closes;
#   - a few failure modes through pi-ai (overflow text, rate-limit-ms-once retried by the SDK).
# Exit 0 when everything passes, 1 on any failure, 77 (CTest "Skipped") when npm is unreachable
# for the first install of pi-ai.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nm=$("$here/piai_install.sh") || exit $?
command -v curl >/dev/null 2>&1 || { echo "FAILED: curl is required" >&2; exit 1; }
export PIAI_NODE_MODULES=$nm

work=$(mktemp -d)
srv_pid=
cleanup() {
  if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Start the server (bounded lifetime; it also exits when this shell goes away).
node "$here/fake_provider.mjs" --lifetime-s 900 --silent-ms 20000 >"$work/port" 2>"$work/server.log" &
srv_pid=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/^{"port":\([0-9]*\)}$/\1/p' "$work/port" 2>/dev/null | head -1)
  [ -n "$port" ] && break
  kill -0 "$srv_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAILED: the fake server did not start"; cat "$work/server.log"; exit 1; }
echo "fake provider on 127.0.0.1:$port (pid $srv_pid), pi-ai from $nm"
origin="http://127.0.0.1:$port"

pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

base_url() {
  case $1 in
    anthropic-messages) echo "$origin" ;;
    google-generative-ai) echo "$origin/v1beta" ;;
    *) echo "$origin/v1" ;;
  esac
}

# check NAME FILE JS: FILE holds piai_stream.mjs output (event lines, then the final message); JS is
# an expression over m (final message), ev (event objects), turns (intermediate messages).
check() {
  local name=$1 file=$2 js=$3 why
  why=$(node -e '
    const fs = require("fs");
    const lines = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const m = lines[lines.length - 1] || {};
    const ev = lines.slice(0, -1);
    const turns = ev.filter((e) => e.type === "turn").map((e) => e.message);
    const text = (msg) => (msg.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
    let r;
    try { r = eval(process.argv[2]); } catch (e) { r = "exception: " + e.message; }
    if (r !== true) { console.log(typeof r === "string" ? r : "check is false; message: " + JSON.stringify(m).slice(0, 800)); process.exit(1); }
  ' "$file" "$js" 2>&1) && { ok "$name"; [ -n "$why" ] && echo "  $why"; true; } || bad "$name: $why"
}

# run NAME API MODEL CONTEXT [extra args]: runs pi-ai (bounded), output in $work/NAME.out
run() {
  local name=$1 api=$2 model=$3 ctx=$4; shift 4
  timeout 60 node "$here/piai_stream.mjs" --api "$api" --base-url "$(base_url "$api")" --model "$model" \
    --key test-key --context "$ctx" --events "$@" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  if [ $rc -gt 1 ] || [ ! -s "$work/$name.out" ]; then
    bad "$name: piai_stream exited $rc: $(head -c 600 "$work/$name.err")"
    return 1
  fi
  return 0
}

cat >"$work/ctx.json" <<'EOF'
{"systemPrompt":"You are the fake provider self-test.",
 "messages":[{"role":"user","content":"Hi — héllo 👋, tell me something"}],
 "tools":[{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}},
          {"name":"list_dir","description":"List a folder","parameters":{"type":"object","properties":{"dir":{"type":"string"}},"required":["dir"]}}]}
EOF
echo_text='Echo: Hi — héllo 👋, tell me something — héllo 👋 — ünïcode ✓'

apis="anthropic-messages openai-completions openai-responses google-generative-ai"
for api in $apis; do
  # echo (LF) and echo+crlf: the exact deterministic text, stop, usage, text deltas arrived split.
  # pi-ai 0.73.1's own Anthropic SSE parser (providers/anthropic.js consumeLine) takes a CR that
  # ends a read as a whole line break, so a CR|LF split across reads after an "event:" line yields
  # an event without data ("Could not parse Anthropic SSE event …: Unexpected end of JSON input");
  # the CRLF pass for Anthropic therefore writes the body in one piece, and the split CRLF run
  # below only notes that bug.
  crlf_model=echo+crlf
  [ "$api" = anthropic-messages ] && crlf_model=echo+crlf+nosplit
  for model in echo "$crlf_model" echo+cr; do
    n="$api.$model"
    run "$n" "$api" "$model" "$work/ctx.json" &&
      check "$n" "$work/$n.out" "m.stopReason === 'stop' && text(m) === '$echo_text' && m.usage.input + m.usage.cacheRead + m.usage.cacheWrite > 0 && m.usage.output > 0 && ev.filter(e => e.type === 'text_delta').length > 3 && ev[0].type === 'start' && ev.some(e => e.type === 'done')"
  done
  if [ "$api" = anthropic-messages ]; then
    n="$api.echo+crlf.split"
    run "$n" "$api" echo+crlf "$work/ctx.json" &&
      check "$n" "$work/$n.out" "(m.stopReason === 'stop' && text(m) === '$echo_text') || (m.stopReason === 'error' && /^Could not parse Anthropic SSE event \\w+: Unexpected end of JSON input; data=; raw=event: \\w+$/.test(m.errorMessage) && (console.log('NOTE pi-ai CR|LF bug reproduced: ' + m.errorMessage), true))"
  fi

  # tools-2: round 1 asks for 2 calls (args from the schemas), round 2 for 1, then text naming results.
  n="$api.tools"
  run "$n" "$api" tools-2 "$work/ctx.json" --auto-tools 5 --out-context "$work/$n.ctx.json" &&
    check "$n" "$work/$n.out" "
      turns.length === 2 && turns.every(t => t.stopReason === 'toolUse') &&
      turns[0].content.filter(c => c.type === 'toolCall').map(c => c.name).join() === 'read_file,list_dir' &&
      JSON.stringify(turns[0].content.find(c => c.type === 'toolCall').arguments) === JSON.stringify({path: 'Zürich-1.0', limit: 12}) &&
      turns[1].content.filter(c => c.type === 'toolCall').length === 1 &&
      m.stopReason === 'stop' && text(m).startsWith('Tool results: read_file → read_file result: ok ✓') &&
      text(m).split('result: ok ✓').length - 1 === 3 && text(m).includes('list_dir → list_dir result: ok ✓ {\"dir\":\"Zürich-1.1\"}')"

  # thinking: thinking block then the echo text; then a second turn replaying it (the server's
  # rules must accept pi-ai's replay of thinking/reasoning/signatures).
  n="$api.thinking"
  run "$n" "$api" thinking "$work/ctx.json" --out-context "$work/$n.ctx.json" &&
    check "$n" "$work/$n.out" "
      m.stopReason === 'stop' && m.content.length === 2 && m.content[0].type === 'thinking' &&
      m.content[0].thinking === 'Thinking about «Hi — héllo 👋, tell me something»… step 1: read it; step 2: answer 🤔' &&
      text(m) === '$echo_text' && ev.some(e => e.type === 'thinking_delta') &&
      ('$api' !== 'anthropic-messages' || m.content[0].thinkingSignature.length > 20) &&
      ('$api' !== 'openai-responses' || JSON.parse(m.content[0].thinkingSignature).encrypted_content.length > 20) &&
      ('$api' !== 'openai-completions' || m.content[0].thinkingSignature === 'reasoning_content')"
  if [ -s "$work/$n.ctx.json" ]; then
    node -e 'const fs=require("fs");const c=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));c.messages.push({role:"user",content:"And again — ça va?",timestamp:0});fs.writeFileSync(process.argv[1],JSON.stringify(c));' "$work/$n.ctx.json"
    run "$n.replay" "$api" thinking "$work/$n.ctx.json" &&
      check "$n.replay" "$work/$n.replay.out" "m.stopReason === 'stop' && text(m) === 'Echo: And again — ça va? — héllo 👋 — ünïcode ✓'"
  fi
done

# A few failure modes through pi-ai.
cat >"$work/long.json" <<'EOF'
{"messages":[{"role":"user","content":"one"},
 {"role":"assistant","content":[{"type":"text","text":"a"}],"api":"x","provider":"y","model":"z","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"},
 {"role":"user","content":"two"}]}
EOF
run overflow.anthropic anthropic-messages overflow:2 "$work/long.json" &&
  check overflow.anthropic "$work/overflow.anthropic.out" "m.stopReason === 'error' && /prompt is too long: \\d+ tokens > 200000 maximum/.test(m.errorMessage)"
run overflow.openai openai-completions overflow:2 "$work/long.json" &&
  check overflow.openai "$work/overflow.openai.out" "m.stopReason === 'error' && /maximum context length is 128000 tokens/.test(m.errorMessage)"
run overflow.short openai-responses overflow:3 "$work/long.json" &&
  check overflow.short "$work/overflow.short.out" "m.stopReason === 'stop' && text(m).startsWith('Echo: two')"
run ratelimit.once openai-completions rate-limit-ms-once "$work/long.json" &&
  check ratelimit.once "$work/ratelimit.once.out" "m.stopReason === 'stop' && text(m).startsWith('Echo: two')"
run truncated.anthropic anthropic-messages truncated "$work/long.json" &&
  check truncated.anthropic "$work/truncated.anthropic.out" "m.stopReason === 'error' && m.errorMessage === 'Anthropic stream ended before message_stop'"

# Rule checks with curl: status and the API's error shape.
# expect NAME STATUS SHAPE_JS PATH [curl args...]
expect() {
  local name=$1 status=$2 js=$3 path=$4; shift 4
  local got
  got=$(curl -sS --max-time 10 -o "$work/resp.json" -w '%{http_code}' "$origin$path" "$@" 2>&1)
  if [ "$got" != "$status" ]; then bad "$name: HTTP $got, expected $status: $(head -c 400 "$work/resp.json" 2>/dev/null)"; return; fi
  node -e 'const b=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); process.exit(eval(process.argv[2]) === true ? 0 : 1)' "$work/resp.json" "$js" &&
    ok "$name" || bad "$name: body $(head -c 400 "$work/resp.json")"
}
A=(-H 'x-api-key: test-key' -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json')
O=(-H 'authorization: Bearer test-key' -H 'content-type: application/json')
G=(-H 'x-goog-api-key: test-key' -H 'content-type: application/json')
anth_shape="b.type === 'error' && b.error.type === 'invalid_request_error'"
oai_shape="b.error.type === 'invalid_request_error' && typeof b.error.message === 'string'"
goog_shape="b.error.code === 400 && b.error.status === 'INVALID_ARGUMENT'"

expect rule.anthropic.tool_result_orphan 400 "$anth_shape && b.error.message.includes('unexpected \`tool_use_id\`')" /v1/messages "${A[@]}" -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}]}'
expect rule.anthropic.tool_use_unanswered 400 "$anth_shape && b.error.message.includes('without \`tool_result\`')" /v1/messages "${A[@]}" -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":"next"}]}'
expect rule.anthropic.tool_id_pattern 400 "$anth_shape && b.error.message.includes('String should match pattern')" /v1/messages "${A[@]}" -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call|fc_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call|fc_1","content":"x"}]}]}'
expect rule.anthropic.alternate_roles 400 "$anth_shape" /v1/messages "${A[@]}" -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}'
expect rule.anthropic.empty_text 400 "$anth_shape" /v1/messages "${A[@]}" -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]}'
expect rule.anthropic.max_tokens 400 "$anth_shape && b.error.message === 'max_tokens: Field required'" /v1/messages "${A[@]}" -d '{"model":"echo","stream":true,"messages":[{"role":"user","content":"a"}]}'
expect rule.anthropic.version_header 400 "$anth_shape" /v1/messages -H 'x-api-key: test-key' -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"a"}]}'
expect rule.openai.tool_without_call 400 "$oai_shape && b.error.message.includes(\"role 'tool' must be a response\")" /v1/chat/completions "${O[@]}" -d '{"model":"echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"call_1","content":"x"}]}'
expect rule.openai.tool_call_unanswered 400 "$oai_shape && b.error.message.includes('call_2')" /v1/chat/completions "${O[@]}" -d '{"model":"echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"x"},{"role":"user","content":"next"}]}'
expect rule.openai.stream_options 400 "$oai_shape" /v1/chat/completions "${O[@]}" -d '{"model":"echo","stream":true,"messages":[{"role":"user","content":"hi"}]}'
expect rule.responses.call_id_unknown 400 "$oai_shape && b.error.message.includes('call_zzz')" /v1/responses "${O[@]}" -d '{"model":"echo","stream":true,"input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"call_zzz","output":"x"}]}'
expect rule.google.role 400 "$goog_shape && b.error.message === 'Please use a valid role: user, model.'" '/v1beta/models/echo:streamGenerateContent?alt=sse' "${G[@]}" -d '{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}'
expect rule.google.function_response_position 400 "$goog_shape" '/v1beta/models/echo:streamGenerateContent?alt=sse' "${G[@]}" -d '{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"g","response":{"output":"x"}}}]}]}'
expect auth.anthropic 401 "b.type === 'error' && b.error.type === 'authentication_error'" /v1/messages -H 'x-api-key: wrong' -H 'anthropic-version: 2023-06-01' -d '{"model":"echo","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"a"}]}'
expect auth.openai 401 "b.error.code === 'invalid_api_key'" /v1/chat/completions -H 'authorization: Bearer wrong-key-123456' -d '{"model":"echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a"}]}'
expect auth.responses 401 "b.error.code === 'invalid_api_key'" /v1/responses -H 'authorization: Bearer wrong' -d '{"model":"echo","stream":true,"input":"a"}'
expect auth.google 401 "b.error.code === 401 && b.error.status === 'UNAUTHENTICATED'" '/v1beta/models/echo:streamGenerateContent?alt=sse' -H 'x-goog-api-key: wrong' -d '{"contents":[{"role":"user","parts":[{"text":"a"}]}]}'

# The client closing a stream early is seen by the server.
curl -sS --max-time 1 "$origin/v1/messages" "${A[@]}" -d '{"model":"silent","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"a"}]}' >/dev/null 2>&1
sleep 0.3
curl -sS --max-time 10 "$origin/__stats" >"$work/stats.json"
node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const want = ["anthropic-messages:tool_result_orphan", "anthropic-messages:tool_use_unanswered", "anthropic-messages:tool_id_pattern", "anthropic-messages:alternate_roles", "anthropic-messages:empty_text", "anthropic-messages:max_tokens", "anthropic-messages:version_header", "openai-completions:tool_without_call", "openai-completions:tool_call_unanswered", "openai-completions:stream_options", "openai-responses:call_id_unknown", "google-generative-ai:role", "google-generative-ai:function_response_position"];
  const missing = want.filter((k) => s.rejected[k] !== 1);
  const extra = Object.keys(s.rejected).filter((k) => !want.includes(k));
  if (missing.length || extra.length || s.unauthorized !== 4 || s.clientClosedBeforeEnd < 1) { console.log(JSON.stringify({ missing, extra, s })); process.exit(1); }
' "$work/stats.json" && ok "stats: 400s by rule (pi-ai never broke a rule), 401s, client close seen" || bad "stats: $(head -c 1500 "$work/stats.json")"
curl -sS --max-time 10 "$origin/__requests" >"$work/requests.json"
node -e '
  const raw = require("fs").readFileSync(process.argv[1], "utf8");
  const l = JSON.parse(raw);
  if (raw.includes("test-key")) { console.log("a key value leaked into /__requests"); process.exit(1); }
  const a = l.find((e) => e.headers["x-api-key"]);
  const o = l.find((e) => e.headers["authorization"]);
  const g = l.find((e) => e.headers["x-goog-api-key"]);
  if (a.headers["x-api-key"] !== "[redacted len=8]" || o.headers.authorization !== "Bearer [redacted len=8]" || g.headers["x-goog-api-key"] !== "[redacted len=8]") { console.log(JSON.stringify([a.headers, o.headers, g.headers])); process.exit(1); }
  const r = l.find((e) => e.rule && e.rule.rule === "tool_result_orphan");
  if (!r || r.status !== 400 || !r.body.messages) { console.log("rule entry missing"); process.exit(1); }
' "$work/requests.json" && ok "requests log: keys redacted to their length, failed rule recorded" || bad "requests log"
curl -sS --max-time 10 -X POST "$origin/__reset" >/dev/null
[ "$(curl -sS --max-time 10 "$origin/__requests")" = "[]" ] && ok "reset" || bad "reset"

kill -0 "$srv_pid" 2>/dev/null || bad "the server died: $(tail -5 "$work/server.log")"
if [ -s "$work/server.log" ]; then echo "--- server stderr"; head -c 2000 "$work/server.log"; fi
echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
