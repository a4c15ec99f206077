#!/usr/bin/env node
// Drives the reference client pi-ai (@mariozechner/pi-ai 0.73.1) against a base URL - normally the
// fake provider (fake_provider.mjs) - with a hand-made Model object, and prints what it returns.
//
//   node piai_stream.mjs --api A --base-url U --model M --key K --context FILE.json [options]
//     FILE: {systemPrompt?, messages:[pi messages], tools?:[{name, description, parameters}]}
//     Prints the final AssistantMessage as one JSON line (the last line of stdout).
//     --events          first print each stream event as a JSON line (without the bulky `partial`)
//     --auto-tools N    run up to N tool rounds: answer each toolCall with a toolResult
//                       "<name> result: ok ✓ <args JSON>" and call again (with --events, each
//                       intermediate message is printed as {"type":"turn","message":…})
//     --out-context F   write the final context (with the assistant / tool messages) to F
//     --provider P      model.provider (default "fake")
//     --reasoning       model.reasoning = true
//     --simple LEVEL    use streamSimple() with reasoning LEVEL (minimal|low|medium|high|off)
//                       instead of stream()
//     --max-tokens N  --max-retries N  --timeout-ms N  --context-window N (default 200000)
//     --model-max-tokens N (model.maxTokens, default 8192)  --headers JSON (model.headers)
//     --compat JSON (model.compat)  --session-id S
//   node piai_stream.mjs --bench N --api A --base-url U --model slow:300:20 --key K [--context F]
//     N concurrent streams; prints one JSON line: {streams, ok, errors, firstError, wall_ms,
//     cpu_user_ms, cpu_sys_ms, cpu_ms, chunks (text deltas received), chunks_per_stream_min,
//     ttfd_ms {p50, p99, max} (time to first text delta), peak_rss_mb, rss_before_mb}.
//     --bench-timeout-s S (default 900) aborts what is still running.
// pi-ai is loaded from --piai DIR (a node_modules folder), else $PIAI_NODE_MODULES, else
// ${SESSIONRT_COMPAT_CACHE:-~/.cache/sessionrt-compat}/piai/node_modules (piai_install.sh's).
// Exit status: 0 when the final message is not an error (bench: every stream ok), 1 otherwise,
// 2 on usage errors.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { setMaxListeners } from "node:events";

const a = process.argv.slice(2);
const o = { events: false, autoTools: 0, provider: "fake", reasoning: false, contextWindow: 200000, modelMaxTokens: 8192, benchTimeoutS: 900 };
for (let i = 0; i < a.length; i++) {
  const k = a[i];
  const v = () => {
    if (i + 1 >= a.length) usage(`missing value for ${k}`);
    return a[++i];
  };
  switch (k) {
    case "--api": o.api = v(); break;
    case "--base-url": o.baseUrl = v(); break;
    case "--model": o.model = v(); break;
    case "--key": o.key = v(); break;
    case "--context": o.context = v(); break;
    case "--events": o.events = true; break;
    case "--auto-tools": o.autoTools = Number(v()); break;
    case "--out-context": o.outContext = v(); break;
    case "--provider": o.provider = v(); break;
    case "--reasoning": o.reasoning = true; break;
    case "--simple": o.simple = v(); break;
    case "--max-tokens": o.maxTokens = Number(v()); break;
    case "--max-retries": o.maxRetries = Number(v()); break;
    case "--timeout-ms": o.timeoutMs = Number(v()); break;
    case "--context-window": o.contextWindow = Number(v()); break;
    case "--model-max-tokens": o.modelMaxTokens = Number(v()); break;
    case "--headers": o.headers = JSON.parse(v()); break;
    case "--compat": o.compat = JSON.parse(v()); break;
    case "--session-id": o.sessionId = v(); break;
    case "--piai": o.piai = v(); break;
    case "--bench": o.bench = Number(v()); break;
    case "--bench-timeout-s": o.benchTimeoutS = Number(v()); break;
    default: usage(`unknown argument ${k}`);
  }
}
function usage(msg) {
  process.stderr.write(`piai_stream: ${msg}\n(see the header comment of piai_stream.mjs)\n`);
  process.exit(2);
}
if (!o.api || !o.baseUrl || !o.model) usage("--api, --base-url and --model are required");
if (!o.bench && !o.context) usage("--context is required");

const nm = o.piai || process.env.PIAI_NODE_MODULES || path.join(process.env.SESSIONRT_COMPAT_CACHE || path.join(os.homedir(), ".cache", "sessionrt-compat"), "piai", "node_modules");
const entry = path.join(nm, "@mariozechner", "pi-ai", "dist", "index.js");
if (!fs.existsSync(entry)) {
  process.stderr.write(`piai_stream: pi-ai not found at ${entry}; run tests/providers/piai_install.sh\n`);
  process.exit(2);
}
const piai = await import(pathToFileURL(entry).href);

const model = {
  id: o.model,
  name: o.model,
  api: o.api,
  provider: o.provider,
  baseUrl: o.baseUrl,
  reasoning: o.reasoning,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: o.contextWindow,
  maxTokens: o.modelMaxTokens,
  ...(o.headers ? { headers: o.headers } : {}),
  ...(o.compat ? { compat: o.compat } : {}),
};
const options = {
  apiKey: o.key ?? "",
  ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
  ...(o.maxRetries !== undefined ? { maxRetries: o.maxRetries } : {}),
  ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  ...(o.sessionId !== undefined ? { sessionId: o.sessionId } : {}),
};
function startStream(context, signal) {
  const opt = signal ? { ...options, signal } : options;
  if (o.simple) return piai.streamSimple(model, context, { ...opt, ...(o.simple !== "off" ? { reasoning: o.simple } : {}) });
  return piai.stream(model, context, opt);
}
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

function loadContext() {
  if (!o.context) return { messages: [{ role: "user", content: "Stream the benchmark text, please — héllo 👋", timestamp: 0 }] };
  const c = JSON.parse(fs.readFileSync(o.context, "utf8"));
  const ctx = { messages: (c.messages || []).map((m) => ({ timestamp: 0, ...m })) };
  if (c.systemPrompt) ctx.systemPrompt = c.systemPrompt;
  if (c.tools) ctx.tools = c.tools;
  return ctx;
}

if (o.bench) await bench();
else await single();

async function single() {
  const context = loadContext();
  let final;
  for (let round = 0; ; round++) {
    const s = startStream(context);
    for await (const ev of s) {
      if (o.events) {
        const { partial, ...rest } = ev;
        out(rest);
      }
    }
    final = await s.result();
    context.messages.push(final);
    if (final.stopReason !== "toolUse" || round >= o.autoTools) break;
    if (o.events) out({ type: "turn", message: final });
    for (const tc of final.content.filter((b) => b.type === "toolCall")) {
      context.messages.push({
        role: "toolResult",
        toolCallId: tc.id,
        toolName: tc.name,
        content: [{ type: "text", text: `${tc.name} result: ok ✓ ${JSON.stringify(tc.arguments)}` }],
        isError: false,
        timestamp: 0,
      });
    }
  }
  if (o.outContext) fs.writeFileSync(o.outContext, JSON.stringify(context, null, 1));
  out(final);
  process.exitCode = final.stopReason === "error" || final.stopReason === "aborted" ? 1 : 0;
}

async function bench() {
  const n = o.bench;
  const context = loadContext();
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  const sampler = setInterval(() => { const r = process.memoryUsage().rss; if (r > peakRss) peakRss = r; }, 50);
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // one signal shared by all N streams
  const killer = setTimeout(() => ac.abort(), o.benchTimeoutS * 1000);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const ttfd = [];
  let chunks = 0, ok = 0, errors = 0, firstError = null, minChunks = Infinity;
  const one = async () => {
    const start = performance.now();
    let first = -1, mine = 0;
    const s = startStream(context, ac.signal);
    for await (const ev of s) {
      if (ev.type === "text_delta") {
        if (first < 0) first = performance.now() - start;
        mine++;
      }
    }
    const m = await s.result();
    chunks += mine;
    if (mine < minChunks) minChunks = mine;
    if (first >= 0) ttfd.push(first);
    if (m.stopReason === "error" || m.stopReason === "aborted") { errors++; firstError ??= m.errorMessage; }
    else ok++;
  };
  const all = [];
  for (let i = 0; i < n; i++) all.push(one());
  await Promise.all(all);
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  clearTimeout(killer);
  const r = process.memoryUsage().rss;
  if (r > peakRss) peakRss = r;
  ttfd.sort((x, y) => x - y);
  const pct = (p) => (ttfd.length ? ttfd[Math.min(ttfd.length - 1, Math.floor((p / 100) * ttfd.length))] : null);
  const round = (x) => (x === null ? null : Math.round(x * 10) / 10);
  out({
    client: "pi-ai@0.73.1", api: o.api, model: o.model, streams: n, ok, errors, firstError,
    wall_ms: round(wall), cpu_user_ms: round(cpu.user / 1000), cpu_sys_ms: round(cpu.system / 1000), cpu_ms: round((cpu.user + cpu.system) / 1000),
    chunks, chunks_per_stream_min: minChunks === Infinity ? 0 : minChunks,
    ttfd_ms: { p50: round(pct(50)), p99: round(pct(99)), max: round(ttfd[ttfd.length - 1] ?? null) },
    peak_rss_mb: round(Math.max(peakRss, process.resourceUsage().maxRSS * 1024) / 1048576), rss_before_mb: round(rssBefore / 1048576),
  });
  process.exitCode = errors ? 1 : 0;
}
