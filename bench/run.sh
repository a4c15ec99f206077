#!/usr/bin/env bash
# One command, one run: sessionrt's storage figures beside the reference implementations', as
# ratios. Builds (Release), runs bench/storage_bench, the reference benches from peer-bench
# (pi_append, pi_compaction, pi_concurrency, oc_store_legacy), bench/compaction_bench, pi's
# SessionManager on the files storage_bench and compaction_bench wrote, runtime_bench (end to
# end through the public API) and disk_floor at each runtime shape (with --month, the simulated
# month; with --cluster, bench/cluster_bench: issue #36's nodes on etcd); prints markdown tables
# (paste them into BENCHMARKS.md).
# The reference packages are installed from npm once (see peer-bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  cat <<'USAGE'
Usage: bench/run.sh [--quick] [--month] [--cluster]
  (none)    full sizes: storage, pi and OpenClaw references, compaction, runtime_bench at
            1,000 x 100 (paced too) and 100,000 x 2, memory per session, the disk's floors
            (~7–15 minutes after the first install)
  --quick   small sizes, ~2 minutes after the first install
  --month   also simulate examples/scenarios/month.json (10,000 users x 30 days) and report
            its wall time, turns and turns/s (~30 minutes on 2 cores)
  --cluster also bench/cluster_bench (issue #36): a private etcd and 1, 2, 3
            `sessionrt gateway --cluster` nodes: turns/s, owner vs forwarded latency,
            a 2 -> 3 rebalance under traffic, 20 kill -9 failovers (~3-4 minutes;
            with --quick: 3 kills, ~30 s). Needs Debian's etcd-server.
  -h, --help  this text
Builds build-release (Release) first; the raw JSON lines stay in /tmp/sessionrt-bench-*.
USAGE
}
quick=""
month=""
cluster=""
for arg in "$@"; do
  case "$arg" in
    --quick) quick="--quick" ;;
    --month) month=1 ;;
    --cluster) cluster=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/run.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done
./scripts/setup.sh
build_log=$(mktemp /tmp/sessionrt-bench-build-XXXXXX.log)
if ! { cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release &&
       cmake --build build-release --target storage_bench runtime_bench compaction_bench disk_floor sessionrt \
         ${cluster:+cluster_bench}; } > "$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  echo "bench/run.sh: the Release build failed (whole log: $build_log)" >&2
  exit 1
fi
rm -f "$build_log"
peer=../shared/peer-bench
[ -x "$peer/run.sh" ] || peer=bench/peer-bench
home=${SESSIONRT_PEER_HOME:-$HOME/.cache/sessionrt-peer-bench}
out=$(mktemp -d /tmp/sessionrt-bench-XXXXXX)
echo "[bench] sessionrt storage_bench -> $out/ours.jsonl" >&2
./build-release/bench/storage_bench $quick --dir "$out" > "$out/ours.jsonl"
echo "[bench] reference implementations (peer-bench: $peer)" >&2
SESSIONRT_PEER_HOME=$home bash "$peer/run.sh" $quick pi_append pi_compaction pi_concurrency oc_store_legacy > "$out/peer.jsonl"
echo "[bench] pi SessionManager on the same transcripts" >&2
reps=5; [ -n "$quick" ] && reps=3
node --expose-gc bench/pi_open_build.mjs "$home" "$reps" "$out"/long-*.jsonl > "$out/pi_same_files.jsonl"
echo "[bench] sessionrt compaction_bench (a long session compacted repeatedly) and pi on its file" >&2
centries=50000; [ -n "$quick" ] && centries=5000
./build-release/bench/compaction_bench --entries $centries --rounds 5 --dir "$out" > "$out/compaction.jsonl"
node --expose-gc bench/pi_open_build.mjs "$home" "$reps" "$out/compaction-$centries.jsonl" >> "$out/pi_same_files.jsonl"
echo "[bench] sessionrt runtime_bench (end to end through runtime::send)" >&2
if [ -n "$quick" ]; then
  ./build-release/bench/runtime_bench --quick > "$out/runtime.jsonl"
else
  ./build-release/bench/runtime_bench --sessions 1000 --turns 100 --memory-sessions 0 > "$out/runtime.jsonl"
  ./build-release/bench/runtime_bench --sessions 100000 --turns 2 --inflight 1000 --skip-paced --memory-sessions 0 >> "$out/runtime.jsonl"
  # Memory per session in a process of its own, with glibc's per-thread caches off: chunks
  # parked in a thread's tcache count as in use, which moved the passivated figure between
  # 175 and 203 B from run to run (with the caches off: 160 B, three runs alike).
  GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
    ./build-release/bench/runtime_bench --sessions 0 --memory-sessions 10000 >> "$out/runtime.jsonl"
fi
# The disk's floor at each runtime run's shape: the same sessions, turns and sessions in flight,
# the bytes a turn appended, files created by each session's first turn; the first shape also
# paced at the runtime's paced rate and at half the 100k target.
node -e '
  const ls = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.startsWith("{")).map(JSON.parse);
  const p = ls.find((l) => l.bench === "runtime_paced");
  ls.filter((l) => l.bench === "runtime_throughput").forEach((t, i) => {
    const a = ["--sessions", t.sessions, "--turns", t.turns_per_session, "--inflight", t.inflight, "--create",
               "--bytes", t.transcript_bytes_per_turn];
    if (i === 0) a.push(...(p ? ["--rate", Math.round(p.target_turns_per_s)] : []), "--rate", 50000);
    console.log(a.join(" "));
  });' "$out/runtime.jsonl" > "$out/floor.args"
: > "$out/floor.jsonl"
while read -r floor_args; do
  echo "[bench] disk_floor $floor_args" >&2
  # shellcheck disable=SC2086
  ./build-release/bench/disk_floor $floor_args >> "$out/floor.jsonl"
done < "$out/floor.args"
: > "$out/month.jsonl"
if [ -n "$month" ]; then
  echo "[bench] the simulated month (examples/scenarios/month.json), one run" >&2
  /usr/bin/time -f '%e %U %S %M' -o "$out/month.time" \
    ./build-release/sessionrt simulate examples/scenarios/month.json --quiet --json "$out/month.json" > /dev/null
  node -e '
    const fs = require("fs");
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const [wall, user, sys, maxrss] = fs.readFileSync(process.argv[2], "utf8").trim().split(/\s+/).map(Number);
    const turns = r.summary?.turns ?? null;
    console.log(JSON.stringify({bench: "month", scenario: "month.json", wall_s: wall, user_s: user, sys_s: sys,
      max_rss_mb: Math.round(maxrss / 1024), turns, turns_per_s: turns ? turns / wall : null,
      md5: require("crypto").createHash("md5").update(fs.readFileSync(process.argv[1])).digest("hex")}));
  ' "$out/month.json" "$out/month.time" > "$out/month.jsonl"
fi
# The cluster's figures (#36): its readable lines go to stderr as it runs, its JSON lines to the report.
: > "$out/cluster.jsonl"
if [ -n "$cluster" ]; then
  echo "[bench] cluster_bench: etcd and 1, 2, 3 sessionrt gateway --cluster nodes on loopback" >&2
  # A failure (no etcd, a node that did not come up) says why on stderr; the other figures still print.
  ./build-release/bench/cluster_bench $quick > "$out/cluster.jsonl" ||
    echo "bench/run.sh: cluster_bench failed (exit $?); the report has no cluster figures" >&2
fi
echo "[bench] $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)" >&2
node bench/report.mjs "$out/ours.jsonl" "$out/peer.jsonl" "$out/pi_same_files.jsonl" "$out/runtime.jsonl" "$out/floor.jsonl" "$out/compaction.jsonl" "$out/month.jsonl" "$out/cluster.jsonl"
# The fixtures (transcripts up to 35 MB, stores) go; the measurements stay.
rm -rf "$out"/long-*.jsonl "$out"/compaction-*.jsonl "$out"/store-*
echo "[bench] raw results in $out" >&2
