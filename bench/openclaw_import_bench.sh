#!/usr/bin/env bash
# OpenClaw's own JSONL -> SQLite session migration beside `sessionrt import openclaw` (SQLite ->
# JSONL) of the database it made, on the same generated data, in one run. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bench/openclaw_import_bench.sh [--mb N] [--reps R] [--sample K] [--sessionrt PATH]
                                      [--tmp DIR] [--seed S] [--keep]

Measures, on one generated data set:
  1. OpenClaw 2026.9.6's own migration of a JSON-era state dir into per-agent SQLite:
     `openclaw doctor --session-sqlite import --session-sqlite-all-agents --non-interactive --yes`
     (Node 24, HOME and OPENCLAW_STATE_DIR in a temp dir; installed once by
     tests/compat/openclaw_install.sh into ~/.cache/sessionrt-compat/openclaw);
  2. `sessionrt import openclaw --from <that state dir> --state-dir <fresh dir>`, with fsync (the
     default) and with --no-fsync.
Also times OpenClaw's command on a state dir without sessions (its fixed start-up cost).

The data: agents "main" (~85 %) and "work"; sessions of 100-300 entries made by chaining renamed
copies of tests/vectors/pi_0*.jsonl (fresh session and entry ids), ~1 copy in 8 with 1.5-6 KB
texts (OpenClaw stores those events zstd-compressed); a sessions.json per agent.

Checks, for every sessionrt run: exit 0, "ok": true, every session imported; the output's
sessions.json lists as many sessions as the source, its transcripts have as many lines and bytes;
K sampled transcripts (first, last, random) are byte-identical to the generated originals. For
every OpenClaw run: exit 0, and its databases hold every session and every event.

Output (stdout): one JSON line per measurement, then a markdown table of the medians with the speed
ratio (OpenClaw migration wall time / sessionrt import wall time; entries/s and MB/s are over the
generated transcripts, MB = 10^6 bytes). Progress and OpenClaw's summary go to stderr.
Every run starts after `sync`; caches are warm (the data was just written).

Options:
  --mb N          about N x 10^6 bytes of transcripts (default 200)
  --reps R        runs of each step, medians reported (default 1 when N >= 100, else 3);
                  each OpenClaw run migrates a fresh copy of the JSON-era dir
  --sample K      transcripts compared byte for byte (default 64)
  --sessionrt P   the binary (default build/sessionrt)
  --tmp DIR       where the temp dir goes (default $TMPDIR or /tmp); needs about 8 x N MB free
  --seed S        generator seed (default 20260906)
  --keep          keep the temp dir (its path is printed)
  -h, --help      this text
EOF
}

cd "$(dirname "$0")/.."
mb=200 reps="" sample=64 sessionrt=build/sessionrt tmp=${TMPDIR:-/tmp} seed=20260906 keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --mb) mb=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --sessionrt) sessionrt=$2; shift 2 ;;
    --tmp) tmp=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $mb =~ ^[0-9]+$ ]] && [ "$mb" -gt 0 ] || { echo "--mb wants a positive integer" >&2; exit 2; }
[ -n "$reps" ] || { if [ "$mb" -ge 100 ]; then reps=1; else reps=3; fi; }
[[ $reps =~ ^[0-9]+$ ]] && [ "$reps" -gt 0 ] || { echo "--reps wants a positive integer" >&2; exit 2; }
sessionrt=$(realpath "$sessionrt")
[ -x "$sessionrt" ] || { echo "no binary $sessionrt (build the sessionrt target)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time) for the peak RSS" >&2; exit 2; }

source tests/compat/openclaw_install.sh
helper=bench/openclaw_import_bench.mjs
log() { echo "[oc-bench] $*" >&2; }
fail() { echo "[oc-bench] FAILED: $*" >&2; exit 1; }

need_mb=$((mb * 8 + 200))
avail_mb=$(df -Pm "$tmp" | awk 'NR==2 {print $4}')
[ "$avail_mb" -ge "$need_mb" ] || fail "$tmp has $avail_mb MB free, this run needs about $need_mb MB"
work=$(mktemp -d "$tmp/sessionrt-ocbench-XXXXXX")
if [ -n "$keep" ]; then log "temp dir (kept): $work"; else trap 'rm -rf "$work"' EXIT; fi
results=$work/results.jsonl
: > "$results"

# run NAME CMD... : runs CMD after a sync, sets wall_ns, rss_kb and rc.
run() {
  local name=$1; shift
  sync
  local t0 t1
  t0=$(date +%s%N)
  set +e
  /usr/bin/time -f %M -o "$work/$name.rss" "$@"
  rc=$?
  set -e
  t1=$(date +%s%N)
  wall_ns=$((t1 - t0))
  rss_kb=$(tail -1 "$work/$name.rss")
}
oc_run() {  # oc_run NAME STATE_DIR: OpenClaw's migration with a fresh HOME, output in NAME.txt
  local name=$1 state=$2
  rm -rf "$work/home" && mkdir -p "$work/home"
  run "$name" env HOME="$work/home" OPENCLAW_STATE_DIR="$state" NO_COLOR=1 "$oc_node" "$oc_cli" \
    doctor --session-sqlite import --session-sqlite-all-agents --non-interactive --yes > "$work/$name.txt" 2>&1
}
emit() { "$oc_node" "$helper" measure "$@" | tee -a "$results"; }

log "generating about $mb MB of JSON-era transcripts (seed $seed)"
t0=$(date +%s)
"$oc_node" "$helper" gen tests/vectors "$work/pristine" "$work/orig" "$mb" "$sample" "$seed" > "$work/manifest.json"
manifest=$work/manifest.json
mget() { "$oc_node" -p "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).$1" "$manifest"; }
m_sessions=$(mget sessions) m_entries=$(mget entries) m_bytes=$(mget bytes)
log "generated in $(( $(date +%s) - t0 )) s: $(cat "$manifest")"
echo "{\"bench\":\"openclaw_import\",\"what\":\"dataset\",\"mb_target\":$mb,\"reps\":$reps,\"manifest\":$(cat "$manifest")}"

log "OpenClaw: doctor --session-sqlite import on a state dir without sessions ($reps rep(s))"
for r in $(seq "$reps"); do
  rm -rf "$work/empty" && mkdir -p "$work/empty/agents/main/sessions" && echo '{}' > "$work/empty/agents/main/sessions/sessions.json"
  oc_run "doctor-empty-$r" "$work/empty"
  [ "$rc" -eq 0 ] || { cat "$work/doctor-empty-$r.txt" >&2; fail "openclaw doctor on an empty state dir (exit $rc)"; }
  emit openclaw_doctor_empty_state "$r" "$wall_ns" "$rss_kb" "$manifest"
done
rm -rf "$work/empty"

for r in $(seq "$reps"); do
  log "OpenClaw: migrating the JSON-era dir into SQLite (rep $r/$reps)"
  rm -rf "$work/oc"
  if [ "$r" -eq "$reps" ]; then mv "$work/pristine" "$work/oc"; else cp -a "$work/pristine" "$work/oc"; fi
  oc_run "doctor-$r" "$work/oc"
  [ "$rc" -eq 0 ] || { tail -50 "$work/doctor-$r.txt" >&2; fail "openclaw doctor --session-sqlite import (exit $rc)"; }
  grep -E '^(session-sqlite import|- (main|work):)' "$work/doctor-$r.txt" | sed 's/^/[oc-bench]   /' >&2 || true
  slow=$(grep -c 'slow SQLite transaction' "$work/doctor-$r.txt" || true)
  other=$(grep -v -E '^(session-sqlite import|- |  compact reclaimed|\[sqlite/transaction\] slow SQLite)' "$work/doctor-$r.txt" | grep -c . || true)
  [ "$other" -eq 0 ] || { log "  other OpenClaw output ($other lines):"; grep -v -E '^(session-sqlite import|- |  compact reclaimed|\[sqlite/transaction\] slow SQLite)' "$work/doctor-$r.txt" | head -20 | sed 's/^/[oc-bench]   | /' >&2; }
  counts=$("$oc_node" "$helper" db-count "$work/oc")
  db_sessions=$(echo "$counts" | sed -E 's/.*"sessions":([0-9]+),"events":([0-9]+)}$/\1/')
  db_events=$(echo "$counts" | sed -E 's/.*"sessions":([0-9]+),"events":([0-9]+)}$/\2/')
  [ "$db_sessions" = "$m_sessions" ] && [ "$db_events" = "$m_entries" ] ||
    fail "OpenClaw's databases hold $db_sessions sessions / $db_events events, the source had $m_sessions / $m_entries: $counts"
  db_bytes=$(du -cb "$work"/oc/agents/*/agent/openclaw-agent.sqlite* | tail -1 | cut -f1)
  emit openclaw_migrate "$r" "$wall_ns" "$rss_kb" "$manifest" db_bytes="$db_bytes" db_sessions="$db_sessions" \
    db_events="$db_events" slow_sqlite_warnings="$slow" other_output_lines="$other"
  if [ "$r" -eq 1 ]; then mv "$work/oc" "$work/db"; else rm -rf "$work/oc"; fi
done
ls "$work"/db/agents/*/agent/ | grep -q -- '-wal$' && log "note: OpenClaw left -wal files next to its databases; sessionrt opens them mode=ro (not immutable)"

check_import() {  # check_import REPORT.json: the checks described in --help
  grep -q '"ok": true' "$1" || fail "import report is not ok: $(head -c 2000 "$1")"
  local imported
  imported=$(grep -o '"imported": [0-9]*' "$1" | awk '{s += $2} END {print s}')
  [ "$imported" = "$m_sessions" ] || fail "imported $imported sessions, the source has $m_sessions"
  local out
  out=$("$oc_node" "$helper" out-count "$work/srt")
  local want="$m_sessions $m_entries $m_bytes"
  local got
  got=$(echo "$out" | sed -E 's/.*"sessions":([0-9]+),"entries":([0-9]+),"bytes":([0-9]+)}$/\1 \2 \3/')
  [ "$got" = "$want" ] || fail "output has sessions/entries/bytes $got, the source $want: $out"
  local n=0 f a
  for f in "$work"/orig/*/*.jsonl; do
    a=$(basename "$(dirname "$f")")
    cmp -s "$f" "$work/srt/agents/$a/sessions/$(basename "$f")" || fail "transcript $a/$(basename "$f") differs from the original"
    n=$((n + 1))
  done
  checked_sample=$n
}

for r in $(seq "$reps"); do
  for mode in fsync nofsync; do
    log "sessionrt import openclaw ($mode, rep $r/$reps)"
    rm -rf "$work/srt"
    flag=(); [ "$mode" = nofsync ] && flag=(--no-fsync)
    run "import-$mode-$r" "$sessionrt" import openclaw --from "$work/db" --state-dir "$work/srt" --json "${flag[@]}" \
      > "$work/import-$mode-$r.json" 2> "$work/import-$mode-$r.err"
    [ "$rc" -eq 0 ] || { cat "$work/import-$mode-$r.err" >&2; head -c 3000 "$work/import-$mode-$r.json" >&2; fail "sessionrt import openclaw (exit $rc)"; }
    [ -s "$work/import-$mode-$r.err" ] && { log "  stderr:"; head -20 "$work/import-$mode-$r.err" | sed 's/^/[oc-bench]   | /' >&2; }
    reported_ms=$(grep -o '"elapsedMs": [0-9]*' "$work/import-$mode-$r.json" | awk '{s += $2} END {print s}')
    wall_save=$wall_ns rss_save=$rss_kb
    check_import "$work/import-$mode-$r.json"
    emit sessionrt_import "$r" "$wall_save" "$rss_save" "$manifest" fsync=$([ "$mode" = fsync ] && echo true || echo false) \
      reported_elapsed_ms="$reported_ms" checked_sessions="$m_sessions" byte_identical_sample="$checked_sample"
  done
done
rm -rf "$work/srt"

"$oc_node" "$helper" table "$results"
[ "$reps" -eq 1 ] && echo "(one run of each step: --reps 1, the default for --mb >= 100)"
echo "sessionrt: $sessionrt; OpenClaw: $oc_pkg on $("$oc_node" --version); $(nproc) cores; $(uname -sr)"
