// Helpers for openclaw_sqlite.sh (run with OpenClaw's Node 24):
//   legacy VECTORS STATE ORIG     writes a JSON-era OpenClaw state dir from the pi vectors (agent
//                                 "main": the four pi_0*.jsonl + one with >1 KiB events, which
//                                 OpenClaw stores zstd-compressed; agent "work": one session) and
//                                 keeps a copy of every transcript in ORIG/<sessionId>.jsonl.
//   same-listing A.json B.json    the two `openclaw sessions --json` listings have the same keys,
//                                 session ids and token counts.
//   keys LISTING.json...          prints the session keys of `openclaw sessions --json` listings.
//   same-history A.json B.json    two `openclaw gateway call chat.history --json` answers show the
//                                 same messages (role, content, timestamp, model fields, entry ids
//                                 and positions), leaving out the database's own record time and
//                                 transcript source hash, which differ between two databases.
import fs from "node:fs";
import path from "node:path";

const [cmd, ...args] = process.argv.slice(2);

function writeSession(sessionsDir, orig, store, key, lines, n) {
  const id = JSON.parse(lines[0]).id;
  const text = lines.join("\n") + "\n";
  fs.writeFileSync(path.join(sessionsDir, `${id}.jsonl`), text);
  fs.writeFileSync(path.join(orig, `${id}.jsonl`), text);
  store[key] = {
    sessionId: id, updatedAt: 1789041660000 + n, sessionStartedAt: 1789041600000, chatType: "direct",
    inputTokens: 1000 * n, outputTokens: 10 * n, totalTokens: 1000 * n + 10 * n, contextTokens: 200000,
    sessionFile: path.join(sessionsDir, `${id}.jsonl`),
  };
}

if (cmd === "legacy") {
  const [vectors, state, orig] = args;
  fs.mkdirSync(orig, { recursive: true });
  const stores = {};
  const dirOf = (agent) => {
    const d = path.join(state, "agents", agent, "sessions");
    fs.mkdirSync(d, { recursive: true });
    stores[agent] ??= {};
    return d;
  };
  let n = 0;
  for (const name of ["pi_01_basic", "pi_02_toolcall", "pi_03_compaction", "pi_04_branch"]) {
    const lines = fs.readFileSync(path.join(vectors, `${name}.jsonl`), "utf8").trimEnd().split("\n");
    n++;
    writeSession(dirOf("main"), orig, stores.main, `agent:main:direct:user${n}`, lines, n);
  }
  // Long messages: OpenClaw keeps events of 1 KiB and more as zstd blobs.
  const big = fs.readFileSync(path.join(vectors, "pi_01_basic.jsonl"), "utf8").trimEnd().split("\n").map((l, i) => {
    const e = JSON.parse(l);
    if (i === 0) e.id = "0a1b2c3d-0000-4000-8000-00000000b16b";
    if (e.type === "message" && typeof e.message.content === "string") e.message.content = `${e.message.content} `.repeat(80);
    if (e.type === "message" && Array.isArray(e.message.content))
      for (const c of e.message.content) if (c.type === "text") c.text = `${c.text} `.repeat(60);
    return JSON.stringify(e);
  });
  writeSession(dirOf("main"), orig, stores.main, "agent:main:direct:big", big, ++n);
  const work = fs.readFileSync(path.join(vectors, "pi_02_toolcall.jsonl"), "utf8").trimEnd().split("\n").map((l, i) => {
    const e = JSON.parse(l);
    if (i === 0) e.id = "0a1b2c3d-0000-4000-8000-0000000000a2";
    return JSON.stringify(e);
  });
  writeSession(dirOf("work"), orig, stores.work, "agent:work:main", work, ++n);
  for (const [agent, store] of Object.entries(stores))
    fs.writeFileSync(path.join(state, "agents", agent, "sessions", "sessions.json"), JSON.stringify(store, null, 2));
} else if (cmd === "same-listing") {
  const [a, b] = args.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const pick = (l) => Object.fromEntries((l.sessions ?? []).map((s) =>
    [s.key, { sessionId: s.sessionId, inputTokens: s.inputTokens, outputTokens: s.outputTokens, totalTokens: s.totalTokens }]));
  const pa = pick(a), pb = pick(b);
  const ka = Object.keys(pa).sort(), kb = Object.keys(pb).sort();
  let ok = JSON.stringify(ka) === JSON.stringify(kb) && ka.length > 0;
  for (const k of ka) if (JSON.stringify(pa[k]) !== JSON.stringify(pb[k])) { ok = false; console.error(`differs: ${k}`, pa[k], pb[k]); }
  if (!ok) { console.error("listings differ:", JSON.stringify(pa), JSON.stringify(pb)); process.exit(1); }
  console.log(`same keys, session ids and token counts: ${ka.length} sessions`);
} else if (cmd === "keys") {
  for (const f of args) for (const s of JSON.parse(fs.readFileSync(f, "utf8")).sessions ?? []) console.log(s.key);
} else if (cmd === "same-history") {
  const [a, b] = args.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  const shown = (h) => (h.messages ?? []).map((m) => {
    const { __openclaw: meta = {}, ...rest } = m;
    return { ...rest, id: meta.id, seq: meta.seq, rawSeq: meta.transcriptPosition?.rawSeq };
  });
  const ma = shown(a), mb = shown(b);
  if (ma.length === 0 || a.sessionId !== b.sessionId || JSON.stringify(ma) !== JSON.stringify(mb)) {
    const i = ma.findIndex((m, k) => JSON.stringify(m) !== JSON.stringify(mb[k]));
    console.error(`${a.sessionKey}: ${ma.length} vs ${mb.length} messages, first difference at ${i}:`,
                  JSON.stringify(ma[i])?.slice(0, 300), JSON.stringify(mb[i])?.slice(0, 300));
    process.exit(1);
  }
  console.log(`${a.sessionKey}: the same ${ma.length} messages`);
} else {
  console.error(`unknown command ${cmd}`);
  process.exit(2);
}
