// Joins sessionrt's figures (storage_bench) and the reference's (peer-bench, and pi on the same
// files) into markdown tables with ratios. Usage: node report.mjs FILE.jsonl...
import fs from "node:fs";

const lines = process.argv.slice(2).flatMap((f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)));
const ours = (b) => lines.filter((l) => l.bench === b);
const peer = (b) => lines.find((l) => l.bench === b);
const f = (x, d = 1) => (x == null ? "–" : Number(x).toLocaleString("en-US", { maximumFractionDigits: d }));
const ratio = (a, b) => (a && b ? `${f(a / b, 1)}×` : "–");
let md = "";

const piA = peer("a_transcript_append");
md += "### Transcript appends (user/assistant pairs, ~400 B text, messages built in the loop)\n\n";
md += "| implementation | durability | entries | appends/s | µs/append | fdatasyncs | write syscalls | vs pi |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
if (piA?.append) md += `| pi SessionManager.appendMessage | none (appendFileSync) | ${f(piA.append.entries, 0)} | ${f(piA.append.appends_per_s, 0)} | ${f(piA.append.us_per_append, 2)} | 0 | ${f(piA.append.write_syscalls_per_append * piA.append.entries, 0)} | 1× |\n`;
for (const a of ours("append"))
  md += `| sessionrt transcript_file | ${a.mode} | ${f(a.entries, 0)} | ${f(a.appends_per_s, 0)} | ${f(a.us_per_append, 2)} | ${f(a.fdatasyncs, 0)} | ${f(a.write_syscalls, 0)} | ${ratio(a.appends_per_s, piA?.append?.appends_per_s)} |\n`;

md += "\n### Open + build context, compaction 100 entries before the end (same files for both)\n\n";
md += "| entries | file MB | compaction written by | sessionrt ms | bytes read | lines indexed | pi ms (same file) | pi ctx msgs | speed-up |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|\n";
for (const o of ours("open_build")) {
  const p = lines.find((l) => l.bench === "pi_open_build_same_file" && l.file === o.file);
  md += `| ${f(o.entries, 0)} | ${f(o.file_bytes / 1e6, 1)} | ${o.variant === "pi-compaction" ? "pi (no sessionrt note)" : "sessionrt"} | ${f(o.open_build_ms_median, 3)} | ${f(o.bytes_read, 0)} | ${f(o.lines_indexed, 0)} | ${f(p?.open_build_ms_median, 1)} | ${f(p?.ctx_messages, 0)} | ${ratio(p?.open_build_ms_median, o.open_build_ms_median)} |\n`;
}
if (piA?.open_build) {
  md += "\nFor reference, peer-bench's own pi figures (no compaction): " +
    piA.open_build.map((o) => `${f(o.entries, 0)} entries ${f(o.open_build_ms_median, 1)} ms`).join(", ") + ".\n";
}
const piB = peer("b_compaction");
if (piB?.sizes) md += "peer-bench pi reopen+build after a compaction (firstKept at 90%): " +
  piB.sizes.map((s) => `${f(s.entries, 0)} entries ${f(s.reopen_build_after_ms_median, 1)} ms`).join(", ") + ".\n";

const oc = peer("c_session_store_legacy_json");
md += "\n### sessions.json: load and single-row durable updates\n\n";
md += "| rows | file MB | sessionrt load ms | OpenClaw load ms | sessionrt updates/s | OpenClaw updates/s | update speed-up | sessionrt update ms (median / p99) |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for (const s of ours("store")) {
  const o = oc?.sizes?.find((x) => x.entries === s.entries);
  md += `| ${f(s.entries, 0)} | ${f(s.file_bytes / 1e6, 1)} | ${f(s.load_ms_median, 1)} | ${f(o?.load_ms_median, 1)} | ${f(s.updates_per_s, 1)} | ${f(o?.updates_per_s, 1)} | ${ratio(s.updates_per_s, o?.updates_per_s)} | ${f(s.update_ms_median, 2)} / ${f(s.update_ms_p99, 2)} |\n`;
}
const conc = peer("d_concurrency");
const rts = ours("runtime_throughput");
if (rts.length) {
  md += "\n### End to end through runtime::send (simulated model, durability=batch)\n\n";
  md += "A turn = the user entry and the assistant entry appended and fsync'd (group commit), the row updated in sessions.json; acknowledged after the sync.\n\n";
  md += "| sessions x turns | in flight | turns/s | entries/s | ack p50 ms | ack p99 ms | bytes written/turn | disk bytes/turn | peak RSS MB | failures |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const r of rts)
    md += `| ${f(r.sessions, 0)} x ${f(r.turns_per_session, 0)} | ${f(r.inflight, 0)} | ${f(r.turns_per_s, 0)} | ${f(2 * r.turns_per_s, 0)} | ${f(r.ack_ms_p50, 2)} | ${f(r.ack_ms_p99, 2)} | ${f(r.bytes_written_per_turn, 0)} | ${f(r.disk_bytes_per_turn, 0)} | ${f(r.peak_rss_mb, 1)} | ${r.failures} |\n`;
  if (conc?.concurrent)
    md += `\npi's append loop over the same number of sessions in this run (peer-bench pi_concurrency, ${f(conc.params.sessions, 0)} sessions x ${f(conc.params.messages, 0)} messages, no fsync, no model, no store): ${f(conc.concurrent.msgs_per_s, 0)} entries/s interleaved, ${f(conc.sequential.msgs_per_s, 0)} sequential.\n`;
}
for (const p of ours("runtime_paced"))
  md += `\nPaced at half the measured rate (${f(p.target_turns_per_s, 0)} turns/s requested, ${f(p.achieved_turns_per_s, 0)} achieved, ${f(p.sessions, 0)} x ${f(p.turns_per_session, 0)}): ack p50 ${f(p.ack_ms_p50, 2)} ms, p99 ${f(p.ack_ms_p99, 2)} ms, max ${f(p.ack_ms_max, 2)} ms` +
    (p.later_turns_ack_ms_p99 !== undefined ? `; turns after each session's first (which creates its files): p50 ${f(p.later_turns_ack_ms_p50, 2)} ms, p99 ${f(p.later_turns_ack_ms_p99, 2)} ms` : "") + ".\n";
const floors = ours("disk_floor");
if (floors.length) {
  const rp = ours("runtime_paced")[0];
  md += "\n### The disk's floor in the same run (disk_floor: the bare group commit, no runtime)\n\n";
  md += `One file per session; each turn appends the bytes a runtime turn appended (${[...new Set(floors.map((d) => f(d.bytes_per_turn, 0)))].join(" B, ")} B); ${floors[0].creates ? "a session's first turn creates its file and lock file, as the runtime's does. " : ""}**per file**: syncfs calls in a loop (${floors.find((d) => d.floor !== "shared_log")?.rounds_in_flight ?? 2} at once), a turn acked when a syncfs that started after its write returns (the group commit before the commit log); **shared log**: each turn also appends a record to one log, a round writes the records that waited and fdatasyncs the log, a session's new file is synced with its first record, a checkpoint (syncfs) every 64 MiB (the commit log's).\n\n`;
  md += "| floor | run | floor turns/s | floor ack p50 ms | floor ack p99 ms | floor sync p50 / p99 ms | sessionrt turns/s | sessionrt ack p50 / p99 ms | sessionrt vs floor |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const d of floors) {
    const max = d.mode === "max";
    const same = max
      ? rts.find((r) => r.sessions === d.sessions && r.turns_per_session === d.turns_per_session)
      : rp && Math.abs(rp.target_turns_per_s - d.target_turns_per_s) < 1 ? rp : null;
    const ourRate = same ? (max ? same.turns_per_s : same.achieved_turns_per_s) : null;
    const label = max
      ? `${f(d.sessions, 0)} x ${f(d.turns_per_session, 0)}, ${f(d.inflight, 0)} in flight (closed loop)`
      : `paced at ${f(d.target_turns_per_s, 0)} turns/s (${f(d.sessions, 0)} sessions)`;
    const later = !max && same?.later_turns_ack_ms_p99 !== undefined ? ` (after first turns: ${f(same.later_turns_ack_ms_p99, 2)})` : "";
    const vs = !same ? "–" : max ? `${f(ourRate / d.turns_per_s, 2)}× the rate` : `${f(same.ack_ms_p99 / d.ack_ms_p99, 1)}× the p99`;
    const floorLater = !max && d.later_turns_ack_ms_p99 !== undefined ? ` (after first turns: ${f(d.later_turns_ack_ms_p99, 2)})` : "";
    md += `| ${d.floor === "shared_log" ? "shared log" : "per file"} | ${label} | ${f(d.turns_per_s, 0)} | ${f(d.ack_ms_p50, 2)} | ${f(d.ack_ms_p99, 2)}${floorLater} | ${f(d.sync_ms_p50, 2)} / ${f(d.sync_ms_p99, 2)} | ${same ? f(ourRate, 0) : "–"} | ${same ? `${f(same.ack_ms_p50, 2)} / ${f(same.ack_ms_p99, 2)}${later}` : "–"} | ${vs} |\n`;
  }
}
for (const m of ours("runtime_memory"))
  md += m.heap_bytes_per_idle_session !== undefined
    ? `\nMemory, ${f(m.sessions, 0)} sessions with one turn each, heap in use per session: ${f(m.heap_bytes_per_live_session, 0)} B for a live actor just after its turn, **${f(m.heap_bytes_per_idle_session, 0)} B for a live idle actor** (idle past session.trimIdleMs: transcript closed, context dropped, row left to the store), ${f(m.heap_bytes_per_passivated_session, 0)} B passivated (its place in the sessions.json last written). RSS: ${f(m.rss_bytes_per_live_session, 0)} B, ${f(m.rss_bytes_per_idle_session, 0)} B and ${f(m.rss_bytes_per_passivated_session, 0)} B (RSS keeps freed memory the allocator cannot return).\n`
    : `\nMemory, ${f(m.sessions, 0)} sessions with one turn each: heap in use ${f(m.heap_bytes_per_live_session, 0)} B per live idle session actor, ${f(m.heap_bytes_per_passivated_session, 0)} B per passivated session (the sessions.json row it keeps); RSS ${f(m.rss_bytes_per_live_session, 0)} B and ${f(m.rss_bytes_per_passivated_session, 0)} B (RSS keeps freed memory the allocator cannot return).\n`;
const rounds = ours("compaction_round");
if (rounds.length) {
  const last = rounds[rounds.length - 1];
  const p = lines.find((l) => l.bench === "pi_open_build_same_file" && l.file === last.file);
  md += `\n### A ${f(rounds[0].entries - 1, 0)}-entry session compacted ${rounds.length} times (compaction_bench, simulated summarizer)\n\n`;
  md += "Round 1 compacts the whole conversation (the planner reads all of it, the summary is made in stages); each later round follows 400 more entries.\n\n";
  md += "| round | entries in file | plan ms | path entries read | compact ms (plan + summary + append) | open + build next context ms | ctx msgs | bytes read |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const r of rounds)
    md += `| ${r.round} | ${f(r.entries, 0)} | ${f(r.plan_ms, 2)} | ${f(r.path_entries, 0)} | ${f(r.compact_ms, 2)} | ${f(r.open_build_ms, 3)} | ${f(r.ctx_messages, 0)} | ${f(r.bytes_read, 0)} |\n`;
  if (p) md += `\npi's SessionManager.open + buildSessionContext on the same file after the last round: ${f(p.open_build_ms_median, 1)} ms (${f(p.ctx_messages, 0)} messages), ${ratio(p.open_build_ms_median, last.open_build_ms)} our build time.\n`;
}
for (const m of ours("month")) {
  const mm = Math.floor(m.wall_s / 60), ss = Math.round(m.wall_s - 60 * mm);
  md += `\n### The simulated month (${m.scenario}, one run; target 5 min)\n\n`;
  md += "| turns | wall | turns/s | user s | sys s | peak RSS MB | report md5 |\n|---:|---:|---:|---:|---:|---:|---|\n";
  md += `| ${f(m.turns, 0)} | ${mm} min ${ss} s | ${f(m.turns_per_s, 0)} | ${f(m.user_s, 0)} | ${f(m.sys_s, 0)} | ${f(m.max_rss_mb, 0)} | ${m.md5.slice(0, 8)}… |\n`;
}
// Issue #36 (bench/cluster_bench, run.sh --cluster): nodes on one machine.
const cturns = ours("cluster_turns");
if (cturns.length) {
  const one = cturns.find((c) => c.nodes === 1);
  md += "\n### Cluster (#36): turns through 1, 2 and 3 nodes on this machine (bench/cluster_bench)\n\n";
  md += "Closed loop, chat.send → final; owner = sent to the node holding the session's shard, forwarded = one hop through another node. All nodes share the machine's cores: the ratio is the cluster layer's cost, not scaling.\n\n";
  md += "| nodes | connections × turns | turns/s | vs 1 node | p50 / p99 ms | owner turns p50 / p99 ms | forwarded turns p50 / p99 ms | failures | load |\n|---:|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const c of cturns)
    md += `| ${c.nodes} | ${c.connections} × ${c.turns_per_connection} | ${f(c.turns_per_s, 0)} | ${one ? `${f(c.turns_per_s / one.turns_per_s, 2)}×` : "–"} | ${f(c.latency_ms_p50, 2)} / ${f(c.latency_ms_p99, 2)} | ${c.owner_turns ? `${f(c.owner_ms_p50, 2)} / ${f(c.owner_ms_p99, 2)}` : "–"} | ${c.forwarded_turns ? `${f(c.forwarded_ms_p50, 2)} / ${f(c.forwarded_ms_p99, 2)}` : "–"} | ${c.failures} | ${f(c.load1_before, 1)}–${f(c.load1_after, 1)} |\n`;
}
for (const p of ours("cluster_forward_latency"))
  md += `\nForwarding, one turn in flight (${p.nodes} nodes, ${f(p.pairs, 0)} pairs): owner ${f(p.owner_ms_p50, 2)} / ${f(p.owner_ms_p99, 2)} ms, forwarded ${f(p.forwarded_ms_p50, 2)} / ${f(p.forwarded_ms_p99, 2)} ms (p50 / p99): **+${f(p.added_ms_p50, 2)} ms at p50**, ${f(p.added_ms_p99, 2)} ms at p99.\n`;
for (const r of ours("cluster_rebalance"))
  md += `\nRebalance of ${r.shards} shards, 2 → 3 nodes, under ${r.connections} connections ${r.paced_turns_per_s > 0 ? `paced at ${f(r.paced_turns_per_s, 0)} turns/s` : "in a closed loop"}: settled ${f(r.settle_s_from_start, 2)} s after the third node's start (${f(r.settle_s_from_join, 2)} s after it joined), ${r.table_versions} table versions, ${r.shards_moved} shards moved. Of ${f(r.window_turns, 0)} turns from its start to 1 s after settling, **${f(r.waited_turns, 0)} waited** (${r.retried_turns} retried after UNAVAILABLE, the rest slower than the steady p99 of ${f(r.steady_ms_p99, 2)} ms), the longest **${f(r.largest_wait_ms, 0)} ms**; ${r.failures} failed${r.failures ? ` (${Object.entries(r.failure_kinds ?? {}).map(([k, n]) => `${k} ${n}`).join(", ")})` : ""}.\n`;
for (const k of ours("cluster_failover"))
  md += `\nFailover after kill -9 (lease TTL ${k.lease_ttl_s} s): all ${k.shards} shards held by live nodes again after **p50 ${f(k.p50_s, 2)} s, max ${f(k.max_s, 2)} s** over ${k.kills} kills (${k.leader_kills} of the placement leader); the victim restarted and the table settled again in p50 ${f(k.rejoin_p50_s, 2)} s, max ${f(k.rejoin_max_s, 2)} s.\n`;
process.stdout.write(md);
