#!/usr/bin/env bash
# CTest driver: `sessionrt import openclaw` / `export openclaw` against the real OpenClaw 2026.9.6
# (on Node 24, installed once into a cache folder by openclaw_install.sh).
# 1. A JSON-era state dir is made from the pi vectors (openclaw_sqlite.mjs legacy) and OpenClaw's
#    own migration, `openclaw doctor --session-sqlite import --session-sqlite-all-agents
#    --non-interactive --yes`, turns it into per-agent SQLite (it compresses the >1 KiB events).
# 2. `sessionrt import openclaw` reads that; for every session, `sessionrt transcript context
#    --context-json` of the imported file equals that of the original JSONL.
# 3. `sessionrt export openclaw` writes new databases; OpenClaw's `openclaw sessions --json` of
#    them shows the same keys, session ids and token counts as of its own migrated ones.
# 4. OpenClaw's own gateway, started on its migrated dir and then on the exported one, answers
#    chat.history for every session with the same messages: it reads the exported transcripts.
# Exit 77 (CTest "Skipped") only when npm is unreachable for the first install.
set -uo pipefail
sessionrt=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/openclaw_install.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"
oc() { HOME="$work/home" OPENCLAW_STATE_DIR="$1" NO_COLOR=1 "$oc_node" "$oc_cli" "${@:2}"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

"$oc_node" "$here/openclaw_sqlite.mjs" legacy "$here/../vectors" "$work/oc" "$work/orig" || fail "building the JSON-era state dir"
oc "$work/oc" doctor --session-sqlite import --session-sqlite-all-agents --non-interactive --yes > "$work/doctor.txt" 2>&1 ||
  { cat "$work/doctor.txt"; fail "openclaw doctor --session-sqlite import"; }
cat "$work/doctor.txt"
for agent in main work; do
  [ -f "$work/oc/agents/$agent/agent/openclaw-agent.sqlite" ] || fail "OpenClaw made no database for agent $agent"
  oc "$work/oc" sessions --json --store "$work/oc/agents/$agent/sessions/sessions.json" > "$work/listing-oc-$agent.json" 2> "$work/listing.err" ||
    { cat "$work/listing.err"; fail "openclaw sessions --json --store (agent $agent) (its own migration)"; }
done

echo "--- sessionrt import openclaw"
"$sessionrt" import openclaw --from "$work/oc" --state-dir "$work/srt" || fail "sessionrt import openclaw"
n=0
for orig in "$work"/orig/*.jsonl; do
  id=$(basename "$orig" .jsonl)
  imported=$(ls "$work"/srt/agents/*/sessions/"$id.jsonl" 2>/dev/null | head -1)
  [ -n "$imported" ] || fail "session $id was not imported"
  "$sessionrt" transcript context --context-json "$orig" > "$work/ctx-orig.json" || fail "context of $orig"
  "$sessionrt" transcript context --context-json "$imported" > "$work/ctx-imported.json" || fail "context of $imported"
  cmp -s "$work/ctx-orig.json" "$work/ctx-imported.json" || { diff "$work/ctx-orig.json" "$work/ctx-imported.json" | head -20; fail "context of $id differs"; }
  n=$((n + 1))
done
echo "contexts equal for $n sessions"
echo "--- a second import changes nothing"
"$sessionrt" import openclaw --from "$work/oc" --state-dir "$work/srt" --json > "$work/again.json" || fail "second import"
grep -q '"imported": 0' "$work/again.json" || { cat "$work/again.json"; fail "the second import wrote sessions again"; }

echo "--- sessionrt export openclaw"
"$sessionrt" export openclaw --state-dir "$work/srt" --to "$work/exp" || fail "sessionrt export openclaw"
for agent in main work; do
  oc "$work/exp" sessions --json --store "$work/exp/agents/$agent/sessions/sessions.json" > "$work/listing-exp-$agent.json" 2> "$work/listing.err" ||
    { cat "$work/listing.err"; fail "openclaw sessions --json --store (agent $agent) (exported)"; }
  "$oc_node" "$here/openclaw_sqlite.mjs" same-listing "$work/listing-oc-$agent.json" "$work/listing-exp-$agent.json" ||
    fail "OpenClaw lists the exported agent $agent differently"
done
echo "--- OpenClaw's gateway reads the exported transcripts (chat.history)"
# Its gateway on one state dir, chat.history of every listed session into $work/hist-<tag>-<n>.json.
oc_histories() {
  local dir=$1 tag=$2 log="$work/oc-gateway-$2.log" pid n=0 key oc_port
  oc_port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  # In its own process group: the gateway re-executes itself as a child `openclaw-gateway`.
  setsid env HOME="$work/home" OPENCLAW_STATE_DIR="$dir" NO_COLOR=1 "$oc_node" "$oc_cli" gateway --allow-unconfigured \
    --bind loopback --auth token --token compat --port "$oc_port" > "$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "\[gateway\] ready" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "OpenClaw's gateway exited at start ($tag)"; }
    sleep 0.1  # polling its log for readiness, bounded at 60 s
  done
  grep -q "\[gateway\] ready" "$log" || { kill -- -"$pid"; cat "$log"; fail "OpenClaw's gateway did not start within 60 s ($tag)"; }
  while read -r key; do
    n=$((n + 1))
    oc "$dir" gateway call chat.history --json --url "ws://127.0.0.1:$oc_port" --token compat \
      --params "{\"sessionKey\":\"$key\",\"limit\":1000}" > "$work/hist-$tag-$n.json" 2> "$work/hist.err" ||
      { cat "$work/hist.err"; kill -- -"$pid"; fail "OpenClaw's chat.history of $key ($tag)"; }
  done < "$work/keys.txt"
  kill -TERM -- -"$pid"; wait "$pid" 2>/dev/null
  for _ in $(seq 1 300); do pgrep -g "$pid" >/dev/null || break; sleep 0.1; done  # its children exit, bounded at 30 s
}
"$oc_node" "$here/openclaw_sqlite.mjs" keys "$work"/listing-oc-*.json > "$work/keys.txt"
oc_histories "$work/oc" own
oc_histories "$work/exp" exported
n=0
while read -r key; do
  n=$((n + 1))
  "$oc_node" "$here/openclaw_sqlite.mjs" same-history "$work/hist-own-$n.json" "$work/hist-exported-$n.json" ||
    fail "OpenClaw shows $key's history differently after the export"
done < "$work/keys.txt"
echo "OK"
