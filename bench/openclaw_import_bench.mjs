// Helpers for bench/openclaw_import_bench.sh (run with OpenClaw's Node 24, which has node:sqlite):
//   gen VECTORS STATE ORIG MB SAMPLE [SEED]
//       Writes a JSON-era OpenClaw state dir of about MB x 10^6 bytes of transcripts into STATE:
//       agents "main" (~85 % of the sessions) and "work", each with sessions/sessions.json and
//       sessions/<sessionId>.jsonl. A session has 100-300 entries (uniform), made by chaining copies
//       of the pi vectors (tests/vectors/pi_0*.jsonl) with fresh entry ids (parentId,
//       firstKeptEntryId, targetId and fromId remapped), fresh tool-call ids and moving timestamps;
//       the first entry of each copy hangs off the last entry of the one before. About one copy in
//       eight has its assistant and tool-result texts grown to 1.5-6 KB of random words, so OpenClaw
//       keeps those events as zstd blobs. Every line is JSON.stringify's bytes. SAMPLE sessions
//       (the first, the last and random others) are copied to ORIG/<agent>/<sessionId>.jsonl.
//       Prints a JSON manifest: {sessions, entries (lines, the header included), bytes, agents:
//       {id: {sessions, entries, bytes}}}.
//   db-count STATE
//       Counts OpenClaw's migrated databases: {agents: {id: {sessions, events}}, sessions, events}
//       (session_nodes rows; transcript_events rows plus the events of cold archives, if any).
//   out-count STATE
//       Counts a sessionrt state dir: {agents: {id: {sessions, entries, bytes}}, sessions, entries,
//       bytes} from each agent's sessions.json and the transcript files it names.
//   measure WHAT REP WALL_NS RSS_KB MANIFEST [KEY=VALUE...]
//       Prints one measurement as a JSON line: wall_s, entries/s and MB/s (10^6 bytes/s) over the
//       generated transcripts (MANIFEST's entries and bytes), peak RSS; extra KEY=VALUE pairs are
//       added (numbers and true/false as such).
//   table FILE
//       Prints a markdown table of the medians of FILE's measurement lines, with the speed ratio
//       of each step to OpenClaw's migration.
import fs from "node:fs";
import path from "node:path";

const [cmd, ...args] = process.argv.slice(2);

// A small deterministic PRNG (mulberry32), so a given --mb and seed always give the same data.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ("the session store keeps one header line then entries with id and parentId links a " +
  "compaction summary replaces older messages while the transcript stays append only function " +
  "return const let import export class struct template vector string size_t uint64_t error " +
  "result src main cpp include test build cmake ninja release debug file path directory list " +
  "read write fsync rename lock wal checkpoint sqlite json jsonl parse stringify buffer bytes " +
  "tokens usage cost model provider anthropic assistant user tool call bash command output exit " +
  "code stdout stderr warning failed passed ok line column offset index key value map set").split(" ");

if (cmd === "gen") {
  const [vectors, state, orig, mbArg, sampleArg, seedArg] = args;
  const targetBytes = Number(mbArg) * 1e6;
  const sampleN = Number(sampleArg);
  const rand = rng(Number(seedArg ?? 20260906));
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const hex = (n) => { let s = ""; for (let i = 0; i < n; i++) s += "0123456789abcdef"[Math.floor(rand() * 16)]; return s; };
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[int(0, 3)]}${hex(3)}-${hex(12)}`;
  const words = (bytes) => { const w = []; let n = 0; while (n < bytes) { const x = WORDS[int(0, WORDS.length - 1)]; w.push(x); n += x.length + 1; } return w.join(" "); };

  // Vector bodies (without their session headers), parsed once.
  const bodies = ["pi_01_basic", "pi_02_toolcall", "pi_03_compaction", "pi_04_branch"].map((name) =>
    fs.readFileSync(path.join(vectors, `${name}.jsonl`), "utf8").trimEnd().split("\n").slice(1).map((l) => JSON.parse(l)));

  const agents = { main: { store: {}, sessions: 0, entries: 0, bytes: 0 }, work: { store: {}, sessions: 0, entries: 0, bytes: 0 } };
  for (const a of Object.keys(agents)) fs.mkdirSync(path.join(state, "agents", a, "sessions"), { recursive: true });

  // Which sessions are sampled is decided afterwards (first, last, random); keep the id list.
  const made = [];
  let total = 0, entriesTotal = 0, n = 0;
  const t0 = Date.parse("2026-06-01T08:00:00.000Z");
  while (total < targetBytes) {
    n++;
    const agent = rand() < 0.85 ? "main" : "work";
    const id = uuid();
    let clock = t0 + n * 97_000;
    const iso = () => new Date(clock).toISOString();
    const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: iso(), cwd: `/home/bench/project${n % 17}` })];
    const want = int(100, 300);
    const seen = new Set();
    let last = null, copy = 0;
    while (lines.length - 1 < want) {
      const body = bodies[int(0, bodies.length - 1)];
      const big = rand() < 0.125;
      const ids = new Map();
      const fresh = (old) => {
        if (old == null) return old;
        if (!ids.has(old)) { let x; do x = hex(8); while (seen.has(x)); seen.add(x); ids.set(old, x); }
        return ids.get(old);
      };
      copy++;
      for (const src of body) {
        if (lines.length - 1 >= want) break;
        const e = structuredClone(src);
        clock += int(200, 4000);
        e.id = fresh(e.id);
        e.parentId = e.parentId == null ? last : fresh(e.parentId);
        for (const f of ["firstKeptEntryId", "targetId", "fromId"]) if (e[f] != null) e[f] = fresh(e[f]);
        e.timestamp = iso();
        if (e.type === "message") {
          const m = e.message;
          m.timestamp = clock;
          if (m.toolCallId) m.toolCallId = `toolu_${n}_${copy}`;
          if (Array.isArray(m.content)) for (const c of m.content) {
            if (c.type === "toolCall") c.id = `toolu_${n}_${copy}`;
            if (c.type === "text" && big && m.role !== "user") c.text = `${c.text}\n${words(int(1500, 6000))}`;
          }
        }
        lines.push(JSON.stringify(e));
        last = e.id;
      }
    }
    const text = lines.join("\n") + "\n";
    const file = path.join(state, "agents", agent, "sessions", `${id}.jsonl`);
    fs.writeFileSync(file, text);
    const bytes = Buffer.byteLength(text);
    total += bytes;
    entriesTotal += lines.length;
    const A = agents[agent];
    A.sessions++; A.entries += lines.length; A.bytes += bytes;
    const tok = int(1000, 150000);
    A.store[`agent:${agent}:direct:user${n}`] = {
      sessionId: id, updatedAt: clock, sessionStartedAt: t0 + n * 97_000, chatType: "direct",
      inputTokens: tok, outputTokens: Math.floor(tok / 20), totalTokens: tok + Math.floor(tok / 20), contextTokens: 200000,
      sessionFile: file,
    };
    made.push([agent, id]);
  }
  for (const [a, A] of Object.entries(agents))
    fs.writeFileSync(path.join(state, "agents", a, "sessions", "sessions.json"), JSON.stringify(A.store, null, 2));

  const pick = new Set([0, made.length - 1]);
  while (pick.size < Math.min(sampleN, made.length)) pick.add(int(0, made.length - 1));
  for (const i of pick) {
    const [agent, id] = made[i];
    fs.mkdirSync(path.join(orig, agent), { recursive: true });
    fs.copyFileSync(path.join(state, "agents", agent, "sessions", `${id}.jsonl`), path.join(orig, agent, `${id}.jsonl`));
  }
  const out = { mbTarget: Number(mbArg), sessions: made.length, entries: entriesTotal, bytes: total, sampled: pick.size, agents: {} };
  for (const [a, A] of Object.entries(agents)) out.agents[a] = { sessions: A.sessions, entries: A.entries, bytes: A.bytes };
  console.log(JSON.stringify(out));
} else if (cmd === "db-count") {
  const { DatabaseSync } = await import("node:sqlite");
  const [state] = args;
  const out = { agents: {}, sessions: 0, events: 0 };
  for (const a of fs.readdirSync(path.join(state, "agents")).sort()) {
    const file = path.join(state, "agents", a, "agent", "openclaw-agent.sqlite");
    if (!fs.existsSync(file)) continue;
    const db = new DatabaseSync(file, { readOnly: true });
    const one = (sql) => Object.values(db.prepare(sql).get())[0];
    const sessions = one("SELECT count(*) FROM session_nodes");
    let events = one("SELECT count(*) FROM transcript_events");
    const cold = one("SELECT count(*) FROM session_transcript_cold_archives");
    db.close();
    out.agents[a] = { sessions, events, coldArchives: cold };
    out.sessions += sessions; out.events += events;
  }
  console.log(JSON.stringify(out));
} else if (cmd === "out-count") {
  const [state] = args;
  const out = { agents: {}, sessions: 0, entries: 0, bytes: 0 };
  const root = path.join(state, "agents");
  for (const a of fs.existsSync(root) ? fs.readdirSync(root).sort() : []) {
    const storeFile = path.join(root, a, "sessions", "sessions.json");
    if (!fs.existsSync(storeFile)) continue;
    const store = JSON.parse(fs.readFileSync(storeFile, "utf8"));
    const A = { sessions: 0, entries: 0, bytes: 0 };
    for (const e of Object.values(store)) {
      A.sessions++;
      const file = e.sessionFile ?? path.join(root, a, "sessions", `${e.sessionId}.jsonl`);
      const buf = fs.readFileSync(file);
      A.bytes += buf.length;
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) A.entries++;
    }
    out.agents[a] = A;
    out.sessions += A.sessions; out.entries += A.entries; out.bytes += A.bytes;
  }
  console.log(JSON.stringify(out));
} else if (cmd === "measure") {
  const [what, rep, wallNs, rssKb, manifestFile, ...kv] = args;
  const m = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
  const wall = Number(wallNs) / 1e9;
  const empty = what === "openclaw_doctor_empty_state";
  const out = { bench: "openclaw_import", what, rep: Number(rep), mb_target: m.mbTarget,
    sessions: empty ? 0 : m.sessions, entries: empty ? 0 : m.entries, bytes: empty ? 0 : m.bytes,
    wall_s: Number(wall.toFixed(3)) };
  if (!empty) {
    out.entries_per_s = Math.round(m.entries / wall);
    out.mb_per_s = Number((m.bytes / 1e6 / wall).toFixed(2));
  }
  out.peak_rss_mb = Number((Number(rssKb) / 1024).toFixed(1));
  for (const p of kv) {
    const i = p.indexOf("=");
    const k = p.slice(0, i), v = p.slice(i + 1);
    out[k] = v === "true" ? true : v === "false" ? false : v !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
  }
  console.log(JSON.stringify(out));
} else if (cmd === "table") {
  const rows = fs.readFileSync(args[0], "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
  const groups = new Map();
  for (const r of rows) { const k = r.what + (r.fsync === undefined ? "" : r.fsync ? ":fsync" : ":nofsync"); if (!groups.has(k)) groups.set(k, []); groups.get(k).push(r); }
  const label = {
    "openclaw_migrate": "OpenClaw 2026.9.6 `doctor --session-sqlite import` (JSONL -> SQLite)",
    "sessionrt_import:fsync": "`sessionrt import openclaw` (SQLite -> JSONL), fsync (default)",
    "sessionrt_import:nofsync": "`sessionrt import openclaw --no-fsync`",
  };
  const oc = groups.get("openclaw_migrate");
  const ocWall = oc ? median(oc.map((r) => r.wall_s)) : NaN;
  const any = rows.find((r) => r.what !== "openclaw_doctor_empty_state");
  console.log(`\n${any.sessions} sessions, ${any.entries} entries (JSONL lines, headers included), ${(any.bytes / 1e6).toFixed(1)} MB of transcripts (MB = 10^6 bytes); medians of the reps shown\n`);
  console.log("| step | reps | wall s | entries/s | MB/s | peak RSS MB | speed vs OpenClaw |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  for (const [k, rs] of groups) {
    if (k === "openclaw_doctor_empty_state") continue;
    const wall = median(rs.map((r) => r.wall_s));
    console.log(`| ${label[k] ?? k} | ${rs.length} | ${wall.toFixed(2)} | ${Math.round(median(rs.map((r) => r.entries_per_s))).toLocaleString("en-US")} | ` +
      `${median(rs.map((r) => r.mb_per_s)).toFixed(1)} | ${median(rs.map((r) => r.peak_rss_mb)).toFixed(0)} | ${(ocWall / wall).toFixed(1)}x |`);
  }
  const empty = groups.get("openclaw_doctor_empty_state");
  if (empty && oc) {
    const e = median(empty.map((r) => r.wall_s));
    const net = ocWall - e;
    console.log(`\nOpenClaw's same command on a state dir with no sessions takes ${e.toFixed(2)} s (CLI start-up and checks, ${empty.length} rep(s));`);
    console.log(`without it, its migration takes ${net.toFixed(2)} s and the ratios become ` +
      [...groups].filter(([k]) => k.startsWith("sessionrt_import")).map(([k, rs]) => `${(net / median(rs.map((r) => r.wall_s))).toFixed(1)}x (${k.endsWith(":fsync") ? "fsync" : "no fsync"})`).join(", ") + ".");
  }
} else {
  console.error(`unknown command ${cmd}`);
  process.exit(2);
}
