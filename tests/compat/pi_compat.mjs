// Two-way compatibility with @mariozechner/pi-coding-agent's SessionManager.
//   node pi_compat.mjs <pi package dir> <sessionrt binary> <dir of sessionrt-written files> <scratch dir>
// 1. every *.jsonl in the sessionrt dir: SessionManager.open(f) must not rewrite it, must load
//    every entry, and for the active leaf and for EVERY entry id as leaf, pi's
//    buildSessionContext equals `sessionrt transcript context --context-json [--leaf id]`;
// 2. pi writes its own transcripts (messages, tool calls, compaction, branch, unicode) and
//    sessionrt must build the same contexts from them.
// Prints one line per file and "pi-compat: N files, M contexts compared, K mismatches".
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { pathToFileURL } from "node:url";

const [pkgDir, binary, ourDir, scratch] = process.argv.slice(2);
const pi = await import(pathToFileURL(path.join(pkgDir, "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href);
const { SessionManager, buildSessionContext } = pi;

let files = 0, contexts = 0, mismatches = 0;
function ours(file, leaf) {
  const args = ["transcript", "context", "--context-json", file];
  if (leaf) args.push("--leaf", leaf);
  return JSON.parse(execFileSync(binary, args, { encoding: "utf8", maxBuffer: 1 << 28 }));
}
function compareFile(file, label) {
  const before = fs.readFileSync(file, "utf8");
  const sm = SessionManager.open(file, path.dirname(file));
  const entries = sm.getEntries();
  const lines = before.trim().split("\n").length - 1;
  let bad = [];
  if (entries.length !== lines) bad.push(`pi loaded ${entries.length} of ${lines} entries`);
  if (fs.readFileSync(file, "utf8") !== before) bad.push("pi rewrote the file on open");
  const check = (leaf, piCtx) => {
    contexts++;
    const mine = ours(file, leaf);
    if (!isDeepStrictEqual(mine, JSON.parse(JSON.stringify(piCtx)))) {
      bad.push(`context differs for leaf ${leaf ?? "(active)"}`);
      if (bad.length < 3) {
        fs.writeFileSync(path.join(scratch, `${path.basename(file)}.${leaf ?? "active"}.pi.json`), JSON.stringify(piCtx, null, 2));
        fs.writeFileSync(path.join(scratch, `${path.basename(file)}.${leaf ?? "active"}.ours.json`), JSON.stringify(mine, null, 2));
      }
    }
  };
  check(undefined, sm.buildSessionContext());
  if (entries.length <= 300) for (const e of entries) check(e.id, buildSessionContext(entries, e.id));
  files++;
  mismatches += bad.length;
  console.log(`${bad.length ? "MISMATCH" : "ok"} ${label} ${path.basename(file)} (${entries.length} entries)${bad.length ? ": " + bad.join("; ") : ""}`);
}

for (const f of fs.readdirSync(ourDir).filter((f) => f.endsWith(".jsonl")).sort()) compareFile(path.join(ourDir, f), "sessionrt-written");

// A sessionrt fork (compat_writer: rtfork_*): pi builds the child's context at the parent's
// leaf equal to the parent's context, and the child's header names the parent's file.
const forkLeaf = path.join(ourDir, "rtfork.leaf");
if (fs.existsSync(forkLeaf)) {
  const [leaf, parentName] = fs.readFileSync(forkLeaf, "utf8").trim().split("\n");
  const parent = SessionManager.open(path.join(ourDir, "rtfork_parent.jsonl"), ourDir);
  const child = SessionManager.open(path.join(ourDir, "rtfork_child.jsonl"), ourDir);
  const want = JSON.parse(JSON.stringify(buildSessionContext(parent.getEntries(), leaf).messages));
  const got = JSON.parse(JSON.stringify(buildSessionContext(child.getEntries(), leaf).messages));
  const header = JSON.parse(fs.readFileSync(path.join(ourDir, "rtfork_child.jsonl"), "utf8").split("\n")[0]);
  const bad = [];
  contexts++;
  if (!isDeepStrictEqual(got, want)) bad.push("the child's first context differs from the parent's");
  if (!want.length || want[0].role !== "compactionSummary") bad.push("the parent's context has no compaction summary");
  if (path.basename(header.parentSession ?? "") !== parentName) bad.push(`header parentSession is ${header.parentSession}`);
  mismatches += bad.length;
  console.log(`${bad.length ? "MISMATCH" : "ok"} fork: child context at ${leaf} (${got.length} messages)${bad.length ? ": " + bad.join("; ") : ""}`);
}

// pi writes.
const piDir = path.join(scratch, "pi-written");
fs.mkdirSync(piDir, { recursive: true });
const usage = { input: 1200, output: 90, cacheRead: 0, cacheWrite: 0, totalTokens: 1290, cost: { input: 0.0036, output: 0.00135, cacheRead: 0, cacheWrite: 0, total: 0.0049499999999999995 } };
const A = (content, stopReason = "stop") => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason, timestamp: Date.now() });
const U = (content) => ({ role: "user", content, timestamp: Date.now() });
function piSession(name, fill) { const sm = SessionManager.create("/home/compat/pi", piDir); fill(sm); return sm.getSessionFile(); }
const written = [
  piSession("basic", (sm) => { sm.appendModelChange("openai", "gpt-5.5"); sm.appendThinkingLevelChange("low"); sm.appendMessage(U("hi")); sm.appendMessage(A([{ type: "text", text: "hello" }])); }),
  piSession("tools", (sm) => {
    sm.appendMessage(U([{ type: "text", text: "run ls" }]));
    sm.appendMessage(A([{ type: "thinking", thinking: "ls", thinkingSignature: "s" }, { type: "toolCall", id: "t1", name: "bash", arguments: { command: "ls", n: 1.5 } }], "toolUse"));
    sm.appendMessage({ role: "toolResult", toolCallId: "t1", toolName: "bash", content: [{ type: "text", text: "a\nb" }], isError: false, timestamp: Date.now() });
    sm.appendMessage(A([{ type: "text", text: "two files" }]));
  }),
  piSession("compaction", (sm) => {
    const ids = [];
    for (let i = 0; i < 8; i++) { ids.push(sm.appendMessage(U(`u${i}`))); sm.appendMessage(A([{ type: "text", text: `a${i}` }])); }
    sm.appendCompaction("## Goal\nsummary", ids[6], 9999, { readFiles: ["a.txt"], modifiedFiles: [] });
    sm.appendMessage(U("after"));
    sm.appendMessage(A([{ type: "text", text: "ok" }]));
  }),
  piSession("branch", (sm) => {
    sm.appendSessionInfo("branchy");
    const u = sm.appendMessage(U("choose")); const a = sm.appendMessage(A([{ type: "text", text: "x or y" }]));
    sm.appendMessage(U("x")); sm.appendMessage(A([{ type: "text", text: "x it is" }]));
    sm.appendLabelChange(u, "start");
    sm.branchWithSummary(a, "abandoned x");
    sm.appendMessage(U("y")); sm.appendMessage(A([{ type: "text", text: "y it is" }]));
    sm.appendCustomMessageEntry("note", "custom text", true, { k: 1 });
    sm.appendCustomEntry("state", { v: [1, 2] });
  }),
  piSession("unicode", (sm) => { sm.appendMessage(U("😀 上下文 \u2028 \"q\" \\ \u0001")); sm.appendMessage(A([{ type: "text", text: "é ✓ \ud83d\ude00" }])); }),
];
for (const f of written) compareFile(f, "pi-written");
console.log(`pi-compat: ${files} files, ${contexts} contexts compared, ${mismatches} mismatches`);
process.exit(mismatches === 0 ? 0 : 1);
