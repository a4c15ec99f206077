#!/usr/bin/env bash
# sessionrt's provider runners against the reference client pi-ai 0.73.1, call by call:
#   compare_piai.sh <provider_call_tool path>
# For each API (openai-completions, openai-responses, anthropic-messages, google-generative-ai) x
# fake model (echo, tools, thinking, length) x stored context (made by compare_piai.mjs from the
# pi transcripts in tests/vectors and ../shared/vectors: plain turns; a tool call with thinking
# from another model; the same replayed as the called model's own; images (no transcript holds
# one: the tool-call one gets images in a user message and a tool result); an orphaned tool
# call and an errored assistant message; plus two contexts pi-ai itself wrote against the fake
# server: a thinking turn and a tool round with their real signatures / ids), and then for the
# next call after some of them (each client's own reply in the context), it makes the same
# single call through pi-ai
# (piai_stream.mjs --simple off: pi's agent calls streamSimple with the thinking level off, as
# our runner does) and through provider_call_tool, both via compare_piai.mjs's record/replay
# proxy in front of the fake provider (fake_provider.mjs):
#   - pi-ai's request goes to the fake server, and the stream it answers is recorded;
#   - our request goes to the fake server too (its rules are checked, /__requests logs it), but
#     when the server accepts it we get pi-ai's recorded stream, byte for byte and in the same
#     pieces. Both clients therefore read the very same stream (the fake's usage counts depend
#     on the request's byte length, which may legitimately differ: key order, escaping…).
# Then compare_piai.mjs compares the two AssistantMessages and the two request bodies the fake
# server logged; the only differences it accepts are those in the table at its top.
# Exit 0 when every case agrees, 1 otherwise, 77 (CTest "Skipped") when npm is unreachable for
# the first install of pi-ai.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tool=${1:-}
[ -n "$tool" ] && [ -x "$tool" ] || { echo "usage: compare_piai.sh <provider_call_tool path> (got '${tool}')" >&2; exit 2; }
nm=$("$here/piai_install.sh") || exit $?
command -v curl >/dev/null 2>&1 || { echo "FAILED: curl is required" >&2; exit 1; }
export PIAI_NODE_MODULES=$nm

work=$(mktemp -d)
srv_pid= proxy_pid=
cleanup() {
  for p in $proxy_pid $srv_pid; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  if [ -n "${KEEP_WORK:-}" ]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# wait_port FILE PID: the {"port":N} line a server prints once listening.
wait_port() {
  local p=
  for _ in $(seq 1 150); do
    p=$(sed -n 's/^{"port":\([0-9]*\)}$/\1/p' "$1" 2>/dev/null | head -1)
    [ -n "$p" ] && break
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "$p"
}

# The fake server and the proxy (bounded lifetimes; both also exit when this shell goes away).
node "$here/fake_provider.mjs" --lifetime-s 900 --silent-ms 20000 >"$work/fake.port" 2>"$work/fake.log" &
srv_pid=$!
port=$(wait_port "$work/fake.port" "$srv_pid")
[ -n "$port" ] || { echo "FAILED: the fake server did not start"; cat "$work/fake.log"; exit 1; }
origin="http://127.0.0.1:$port"
node "$here/compare_piai.mjs" proxy --upstream "$origin" --lifetime-s 900 >"$work/proxy.port" 2>"$work/proxy.log" &
proxy_pid=$!
pport=$(wait_port "$work/proxy.port" "$proxy_pid")
[ -n "$pport" ] || { echo "FAILED: the proxy did not start"; cat "$work/proxy.log"; exit 1; }
echo "fake provider on $origin, record/replay proxy on 127.0.0.1:$pport, pi-ai from $nm"

# base_url API ORIGIN: where each client is pointed for an API.
base_url() {
  case $1 in
    anthropic-messages) echo "$2" ;;
    google-generative-ai) echo "$2/v1beta" ;;
    *) echo "$2/v1" ;;
  esac
}
apis="openai-completions openai-responses anthropic-messages google-generative-ai"
models="echo tools thinking length"
rates='{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75}'

# Contexts pi-ai writes itself against the fake server (real signatures, ids, reasoning items).
mkdir -p "$work/gen" "$work/ctx" "$work/cases"
printf '%s\n' '{"systemPrompt":"You are the comparison test.","messages":[{"role":"user","content":"Think it over and use the tools — héllo 👋"}],"tools":[{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}},{"name":"list_dir","description":"List a folder","parameters":{"type":"object","properties":{"dir":{"type":"string"}},"required":["dir"]}}]}' >"$work/gen/seed.json"
for api in $apis; do
  b=$(base_url "$api" "$origin")
  timeout 60 node "$here/piai_stream.mjs" --simple off --api "$api" --base-url "$b" --model thinking --key test-key \
    --context "$work/gen/seed.json" --out-context "$work/gen/thinking.$api.json" >/dev/null 2>"$work/gen/thinking.$api.err" ||
    { echo "FAILED: pi-ai thinking turn for $api: $(head -c 600 "$work/gen/thinking.$api.err")"; exit 1; }
  timeout 60 node "$here/piai_stream.mjs" --simple off --api "$api" --base-url "$b" --model tools --key test-key \
    --auto-tools 1 --context "$work/gen/seed.json" --out-context "$work/gen/tools.$api.json" >/dev/null 2>"$work/gen/tools.$api.err" ||
    { echo "FAILED: pi-ai tool round for $api: $(head -c 600 "$work/gen/tools.$api.err")"; exit 1; }
done
vec_dirs="$repo/tests/vectors"
[ -d "$repo/../shared/vectors" ] && vec_dirs="$vec_dirs:$(cd "$repo/../shared/vectors" && pwd)"
node "$here/compare_piai.mjs" contexts "$work/ctx" --vectors "$vec_dirs" --generated "$work/gen" --apis "$apis" --models "$models" ||
  { echo "FAILED: making the contexts"; exit 1; }
contexts=$(cat "$work/ctx/names")

# run_case CASE API MODEL LABEL PIAI_CONTEXT OURS_CONTEXT [extra cases.jsonl fields]: the same
# call through pi-ai (recorded by the proxy) and through provider_call_tool (replayed), each
# client's request as the fake server logged it.
run_case() {
  local c=$1 api=$2 model=$3 label=$4 pctx=$5 octx=$6 extra=${7:-}
  local d="$work/cases/$c"
  mkdir -p "$d"
  curl -s -m 10 -X POST "$origin/__reset" >/dev/null
  timeout 60 node "$here/piai_stream.mjs" --simple off --api "$api" --base-url "$(base_url "$api" "http://127.0.0.1:$pport/rec/$c")" \
    --model "$model" --key test-key --context "$pctx" >"$d/piai.out" 2>"$d/piai.err"
  echo $? >"$d/piai.rc"
  curl -s -m 10 "$origin/__requests" >"$d/piai_requests.json"
  curl -s -m 10 -X POST "$origin/__reset" >/dev/null
  timeout 60 "$tool" --simple off --api "$api" --base-url "$(base_url "$api" "http://127.0.0.1:$pport/play/$c")" \
    --model "$model" --key test-key --context "$octx" --cost "$rates" >"$d/ours.out" 2>"$d/ours.err"
  echo $? >"$d/ours.rc"
  curl -s -m 10 "$origin/__requests" >"$d/ours_requests.json"
  printf '{"case":"%s","api":"%s","model":"%s","context":"%s","piaiContext":"%s","oursContext":"%s"%s}\n' \
    "$c" "$api" "$model" "$label" "$pctx" "$octx" "$extra" >>"$work/cases/cases.jsonl"
}

n=0
for api in $apis; do
  for model in $models; do
    for cx in $contexts; do
      n=$((n + 1))
      f="$work/ctx/$cx@$api@$model.json"
      run_case "c$n" "$api" "$model" "$cx" "$f" "$f"
    done
  done
done
# The next call after some of them, each client with its own reply in the context.
node "$here/compare_piai.mjs" followups "$work/cases" "$work/next" || { echo "FAILED: making the follow-up contexts"; exit 1; }
while IFS= read -r line; do
  [ -n "$line" ] || continue
  set -- $(node -e 'const c=JSON.parse(process.argv[1]); console.log(c.case, c.api, c.model, c.piaiContext, c.oursContext, c.context)' "$line")
  run_case "$1" "$2" "$3" "$6" "$4" "$5" ',"followup":true'
done <"$work/next/followups.jsonl"

node "$here/compare_piai.mjs" compare "$work/cases" --rates "$rates" --proxy-log "$work/proxy.log"
