#!/usr/bin/env node
// Compares sessionrt's provider runners with the reference client pi-ai 0.73.1 (driven by
// compare_piai.sh; Node >= 20, no npm dependencies of its own).
//
//   node compare_piai.mjs proxy --upstream URL [--lifetime-s S]
//   node compare_piai.mjs contexts OUTDIR --vectors DIR[:DIR] --generated DIR --apis "A …" --models "M …"
//   node compare_piai.mjs followups CASESDIR OUTDIR
//   node compare_piai.mjs compare CASESDIR --rates JSON [--proxy-log FILE]
//
// proxy: the record/replay proxy compare_piai.sh puts in front of the fake server, so that both
// clients read the same stream bytes (see proxy() below). contexts: the stored contexts made
// from the pi transcripts (see contexts()). followups: the next call after a reply, each client
// with its own reply in the context. compare: per case, pi-ai's AssistantMessage against ours
// (content blocks, usage, cost to 1e-9 — pi-ai's cost is its calculateCost of its usage at the
// rates our tool was given, as piai_stream.mjs's model is free —, stopReason, errorMessage,
// api / provider / model, responseId) and the requests the fake server logged for each, matched
// by order (method, path, query, status, the rule it broke, API headers, the whole parsed body:
// roles, content blocks, tool ids and their pairing, system prompt placement, max tokens, …).
//
// TOLERATED (below) is the one list of differences between the two clients that is accepted;
// anything else in the assistant messages or the request bodies fails the case and prints both
// sides. Each entry says what differs, why, and where it is written down (the wire format's
// comment naming the deliberate difference, or "BUG:" for a difference in our code that the
// lead has to decide on). An entry's apply(k) checks that the difference is exactly the one
// described (else it records a problem), then makes the two sides equal; it returns whether it
// applied. k = {api, model, context, followup, rates, P: pi-ai's message, O: ours, preq / oreq:
// the requests the fake server logged (method, path, query, status, rule, headers, body), problems}.
//
//   id                               api        what differs / why                                           written down in
//   timestamp                        all        message.timestamp: each client's clock at the end of the   (by nature)
//                                               call, never equal.
//   error-completion                 all        a failed call: pi-ai returns a message (stopReason "error",  provider_runner.hpp step 5
//                                               errorMessage); provider_runner completes with an error status
//                                               (the runtime stores no message) whose text is pi-ai's
//                                               errorMessage after "<provider>/<model>: " (checked: it ends
//                                               with it); provider_call_tool prints it as {"error"}.
//   sdk-headers                      all        request headers the SDKs add (user-agent, x-stainless-*,    wire_anthropic_messages.cpp
//                                               accept*, sec-fetch-mode, anthropic-dangerous-direct-         ("The SDK's browser / stainless
//                                               browser-access, x-goog-api-client) and transport ones (host, headers … are not sent")
//                                               connection, content-length): not the API's; only
//                                               content-type, anthropic-version/-beta and the auth header
//                                               (redacted to its length) are compared.
//   responses-signature-not-json     responses  a same-model thinking block whose thinkingSignature is not wire_openai_responses.cpp
//                                               JSON (the pi_02 vector's "sig-abc123"): pi-ai's JSON.parse   difference 3
//                                               throws and the call fails before any request; we leave that
//                                               reasoning item out and make the call (checked: ours succeeds,
//                                               the fake accepts the request, no reasoning item in it).
//   responses-text-signature         responses  reply text blocks: pi-ai stores textSignature                wire_openai_responses.cpp
//                                               {"v":1,"id":"msg_…"}; assistant_builder keeps none.          difference 4
//   responses-replayed-text-id       responses  follow-up requests: the replayed assistant text item's id is wire_openai_responses.cpp
//                                               the stored msg_… for pi-ai, pi-ai's own fallback msg_<index> difference 4 ("a replayed text
//                                               for us (no textSignature, see above).                        item gets … msg_<index>")
//   responses-incomplete             responses  a stream ending with response.incomplete (model length):     wire_openai_responses.cpp
//                                               pi-ai ignores the event: stopReason "stop", usage all 0; we  difference 6
//                                               read it: "length" with its usage (checked: counts > 0,
//                                               totalTokens their sum, cost at the model's price).
//   google-tool-call-ids             google     generated tool-call ids (Gemini sends none): pi-ai            wire_google_generative_ai.cpp
//                                               <name>_<Date.now()>_<n>, we <name>_<responseId>_<n> (no      difference 1
//                                               clock in a wire format); checked: same name and counter n.
//   google-thought-signatures        google     the reply's thoughtSignature on text parts (pi-ai:            wire_google_generative_ai.cpp
//                                               textSignature) and functionCall parts (pi-ai: toolCall.       difference 2
//                                               thoughtSignature): pi-ai keeps them, assistant_builder keeps
//                                               only thinking signatures.
//   google-replayed-thought-signatures google   follow-up requests: pi-ai sends those stored signatures back wire_google_generative_ai.cpp
//                                               as the parts' thoughtSignature; we have none to send (the    difference 2
//                                               placeholder is for Gemini 3 models only).
// No "BUG:" entry: every other part of the replies and of the request bodies agreed.
const blocksOf = (m) => (Array.isArray(m?.content) ? m.content : []);
const API_HEADERS = ["content-type", "anthropic-version", "anthropic-beta", "x-api-key", "authorization", "x-goog-api-key", "api-key"];
// Pairs of requests (pi-ai's i-th, ours i-th), when both logged some.
const requestPairs = (k) => (Array.isArray(k.preq) && Array.isArray(k.oreq) ? k.preq.map((p, i) => [p, k.oreq[i]]).filter(([, o]) => o) : []);
const costAt = (rates, u) => {
  const c = { input: (rates.input / 1e6) * u.input, output: (rates.output / 1e6) * u.output, cacheRead: (rates.cacheRead / 1e6) * u.cacheRead, cacheWrite: (rates.cacheWrite / 1e6) * u.cacheWrite };
  return { ...c, total: c.input + c.output + c.cacheRead + c.cacheWrite };
};
const TOLERATED = [
  {
    id: "timestamp",
    apply(k) {
      if (typeof k.P.timestamp !== "number" || typeof k.O.timestamp !== "number") return false;
      delete k.P.timestamp;
      delete k.O.timestamp;
      return true;
    },
  },
  {
    id: "error-completion",
    apply(k) {
      if (!k.O["(provider_call_tool failed)"] || k.P.stopReason !== "error") return false;
      // provider_runner completes a failed call with an error status carrying pi-ai's
      // errorMessage, prefixed by "<provider>/<model>: " (or with a context naming the failure).
      const msg = k.O.errorMessage ?? "";
      if (!msg.endsWith(k.P.errorMessage ?? "\u0000")) {
        k.problems.push(`error-completion: our error text does not end with pi-ai's errorMessage`);
        return true;
      }
      k.O = { ...k.P };
      return true;
    },
  },
  {
    id: "sdk-headers",
    apply(k) {
      let changed = false;
      for (const reqs of [k.preq, k.oreq])
        for (const r of Array.isArray(reqs) ? reqs : []) {
          const keep = Object.fromEntries(API_HEADERS.filter((h) => r.headers && h in r.headers).map((h) => [h, r.headers[h]]));
          if (Object.keys(keep).length !== Object.keys(r.headers ?? {}).length) changed = true;
          r.headers = keep;
        }
      return changed;
    },
  },
  {
    id: "responses-signature-not-json",
    api: "openai-responses",
    apply(k) {
      if (k.P.stopReason !== "error" || !/ is not valid JSON/.test(k.P.errorMessage ?? "") || !Array.isArray(k.preq) || k.preq.length !== 0) return false;
      if (k.O.role !== "assistant" || k.O.stopReason === "error") k.problems.push("responses-signature-not-json: pi-ai refused the context, and so did we (we should have left the reasoning item out)");
      else if (!Array.isArray(k.oreq) || k.oreq.length !== 1 || k.oreq[0].status !== 200 || k.oreq[0].rule) k.problems.push("responses-signature-not-json: our request was not accepted");
      else if ((k.oreq[0].body?.input ?? []).some((item) => item.type === "reasoning")) k.problems.push("responses-signature-not-json: our request still holds a reasoning item");
      k.skipMessage = k.skipRequests = true;
      return true;
    },
  },
  {
    id: "responses-text-signature",
    api: "openai-responses",
    apply(k) {
      let changed = false;
      blocksOf(k.P).forEach((b, i) => {
        const o = blocksOf(k.O)[i];
        if (b.type !== "text" || o?.type !== "text" || b.textSignature === undefined || o.textSignature !== undefined) return;
        let sig;
        try { sig = JSON.parse(b.textSignature); } catch { sig = null; }
        if (sig?.v !== 1 || !/^msg_/.test(sig.id ?? "")) return k.problems.push(`responses-text-signature: unexpected pi-ai textSignature ${b.textSignature}`);
        delete b.textSignature;
        changed = true;
      });
      return changed;
    },
  },
  {
    id: "responses-replayed-text-id",
    api: "openai-responses",
    apply(k) {
      if (!k.followup) return false;
      let changed = false;
      for (const [p, o] of requestPairs(k)) {
        const pi = p.body?.input, oi = o.body?.input;
        if (!Array.isArray(pi) || !Array.isArray(oi)) continue;
        pi.forEach((item, i) => {
          const mine = oi[i];
          if (item?.type !== "message" || item.role !== "assistant" || mine?.type !== "message" || item.id === mine.id) return;
          if (!/^msg_/.test(item.id ?? "") || !/^msg_\d+$/.test(mine.id ?? "")) return;
          mine.id = item.id;
          changed = true;
        });
      }
      return changed;
    },
  },
  {
    id: "responses-incomplete",
    api: "openai-responses",
    apply(k) {
      const zero = (u) => u && ["input", "output", "cacheRead", "cacheWrite", "totalTokens"].every((f) => u[f] === 0);
      if (k.P.stopReason !== "stop" || k.O.stopReason !== "length" || !zero(k.P.usage) || !k.O.usage) return false;
      const u = k.O.usage;
      if (!(u.input + u.cacheRead + u.cacheWrite > 0 && u.output > 0 && u.totalTokens === u.input + u.output + u.cacheRead + u.cacheWrite))
        k.problems.push(`responses-incomplete: our usage is not the event's: ${JSON.stringify(u)}`);
      const want = costAt(k.rates, u);
      for (const f of Object.keys(want))
        if (Math.abs((u.cost?.[f] ?? NaN) - want[f]) > 1e-9) k.problems.push(`responses-incomplete: our cost.${f} ${u.cost?.[f]} is not ${want[f]}`);
      k.P.stopReason = "length";
      k.P.usage = structuredClone(u);
      return true;
    },
  },
  {
    id: "google-tool-call-ids",
    api: "google-generative-ai",
    apply(k) {
      let changed = false;
      blocksOf(k.P).forEach((b, i) => {
        const o = blocksOf(k.O)[i];
        if (b.type !== "toolCall" || o?.type !== "toolCall" || b.id === o.id || b.name !== o.name) return;
        const esc = b.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const pm = new RegExp(`^${esc}_\\d+_(\\d+)$`).exec(b.id ?? "");
        const om = new RegExp(`^${esc}_[A-Za-z0-9_-]+_(\\d+)$`).exec(o.id ?? "");
        if (!pm || !om || pm[1] !== om[1]) return;
        o.id = b.id;
        changed = true;
      });
      return changed;
    },
  },
  {
    id: "google-thought-signatures",
    api: "google-generative-ai",
    apply(k) {
      let changed = false;
      blocksOf(k.P).forEach((b, i) => {
        const o = blocksOf(k.O)[i];
        if (!o || o.type !== b.type) return;
        const field = b.type === "text" ? "textSignature" : b.type === "toolCall" ? "thoughtSignature" : null;
        if (!field || b[field] === undefined || o[field] !== undefined) return;
        delete b[field];
        changed = true;
      });
      return changed;
    },
  },
  {
    id: "google-replayed-thought-signatures",
    api: "google-generative-ai",
    apply(k) {
      if (!k.followup) return false;
      let changed = false;
      for (const [p, o] of requestPairs(k)) {
        const pc = p.body?.contents, oc = o.body?.contents;
        if (!Array.isArray(pc) || !Array.isArray(oc)) continue;
        pc.forEach((content, i) => {
          (content?.parts ?? []).forEach((part, j) => {
            const mine = oc[i]?.parts?.[j];
            if (!mine || part.thoughtSignature === undefined || mine.thoughtSignature !== undefined || part.thought) return;
            if (!("text" in part) && !("functionCall" in part)) return;
            delete part.thoughtSignature;
            changed = true;
          });
        });
      }
      return changed;
    },
  },
];

import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
const cmd = argv.shift();
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const die = (msg) => {
  process.stderr.write(`compare_piai: ${msg}\n`);
  process.exit(2);
};


// ---------------------------------------------------------------------------------------------
// proxy: /rec/<case>/<path> forwards to the upstream and records the response; /play/<case>/<path>
// forwards too (the fake server checks and logs the request) but, when the upstream answers with
// the status recorded for the same request of <case>, sends the recorded response instead, in the
// recorded pieces. Anything else (no recording, another status) is passed through.
// ---------------------------------------------------------------------------------------------
function proxy() {
  const upstream = new URL(opt("--upstream") ?? die("--upstream is required"));
  const lifetimeS = Number(opt("--lifetime-s", "900"));
  const recordings = new Map(); // case -> [{status, headers, chunks}]
  const played = new Map(); // case -> next index
  const hop = new Set(["connection", "keep-alive", "transfer-encoding", "host", "content-length"]);
  const server = http.createServer((req, res) => {
    const m = /^\/(rec|play)\/([A-Za-z0-9_-]+)(\/.*)?$/.exec(req.url);
    if (!m) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not a /rec/ or /play/ path"}');
      return;
    }
    const [, mode, name, rest = "/"] = m;
    const body = [];
    req.on("data", (c) => body.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(body);
      const headers = {};
      for (const [k, v] of Object.entries(req.headers)) if (!hop.has(k)) headers[k] = v;
      headers["content-length"] = String(raw.length);
      const up = http.request({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: rest, headers }, (ur) => {
        const outHeaders = {};
        for (const [k, v] of Object.entries(ur.headers)) if (!hop.has(k)) outHeaders[k] = v;
        if (mode === "rec") {
          const rec = { status: ur.statusCode, headers: outHeaders, chunks: [] };
          if (!recordings.has(name)) recordings.set(name, []);
          recordings.get(name).push(rec);
          res.writeHead(ur.statusCode, outHeaders);
          ur.on("data", (c) => {
            rec.chunks.push(c);
            res.write(c);
          });
          ur.on("end", () => res.end());
          ur.on("error", () => res.destroy());
          return;
        }
        const i = played.get(name) ?? 0;
        played.set(name, i + 1);
        const rec = recordings.get(name)?.[i];
        if (!rec || rec.status !== ur.statusCode) {
          process.stderr.write(`proxy: ${name} request ${i}: upstream ${ur.statusCode}, recorded ${rec ? rec.status : "none"}: passed through\n`);
          res.writeHead(ur.statusCode, outHeaders);
          ur.pipe(res);
          return;
        }
        ur.resume(); // the fake server's own answer to our request is not used
        res.writeHead(rec.status, rec.headers);
        let k = 0;
        const next = () => {
          if (res.destroyed) return;
          if (k >= rec.chunks.length) return void res.end();
          res.write(rec.chunks[k++]);
          setTimeout(next, 1);
        };
        next();
      });
      up.on("error", (e) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: `proxy: ${e.message}` }));
      });
      res.on("close", () => { if (!res.writableFinished) up.destroy(); });
      up.end(raw);
    });
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n"));
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
  if (lifetimeS > 0) setTimeout(() => process.exit(0), lifetimeS * 1000).unref();
  for (const s of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(s, () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// contexts: the stored contexts, one file per (context, api, model): OUTDIR/<name>@<api>@<model>.json
// ({systemPrompt, messages, tools}), and OUTDIR/names (the context names, one per line).
// ---------------------------------------------------------------------------------------------
// A 1x1 PNG (no transcript in the vectors holds an image; see "image" below).
const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const BASH_TOOL = { name: "bash", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } };

function contexts() {
  const out = argv[0] ?? die("OUTDIR is required");
  const dirs = (opt("--vectors") ?? die("--vectors is required")).split(":").filter(Boolean);
  const gen = opt("--generated") ?? die("--generated is required");
  const apis = (opt("--apis") ?? "").split(/\s+/).filter(Boolean);
  const models = (opt("--models") ?? "").split(/\s+/).filter(Boolean);
  fs.mkdirSync(out, { recursive: true });

  // The pi transcripts (pi_*.context.json: what pi's SessionManager builds from each .jsonl).
  const vectors = [];
  for (const d of dirs) {
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).sort()) {
      if (!f.endsWith(".context.json")) continue;
      const v = JSON.parse(fs.readFileSync(path.join(d, f), "utf8"));
      const msgs = v?.context?.messages;
      if (!Array.isArray(msgs)) continue;
      const blocks = msgs.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
      const has = (t) => blocks.some((b) => b.type === t);
      vectors.push({ file: path.join(d, f), msgs, toolCall: has("toolCall"), image: has("image"), thinking: has("thinking") });
    }
  }
  const pick = (what) => vectors.find((v) => v[what]);
  const plain = vectors.find((v) => v.msgs.every((m) => ["user", "assistant", "toolResult"].includes(m.role)) && !v.toolCall);
  const toolVec = pick("toolCall");
  const thinkVec = pick("thinking");
  if (!plain || !toolVec || !thinkVec) die(`the vectors lack a plain / toolCall / thinking transcript (${dirs.join(", ")})`);
  const imageVec = pick("image");
  const clone = (x) => JSON.parse(JSON.stringify(x));
  const followUp = (text) => ({ role: "user", content: text, timestamp: 0 });
  const toolsOf = (msgs) => {
    const names = [...new Set(msgs.flatMap((m) => (m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.name) : [])))];
    return names.map((n) => (n === "bash" ? BASH_TOOL : { name: n, description: `The ${n} tool`, parameters: { type: "object", properties: {} } }));
  };
  const sameModel = (msgs, api, model) => msgs.map((m) => (m.role === "assistant" ? { ...m, api, provider: "fake", model } : m));

  const defs = [];
  // basic: a plain two-pair transcript and a new question.
  defs.push({ name: "basic", make: () => ({ systemPrompt: "You are a terse assistant.", messages: [...clone(plain.msgs), followUp("What else does it keep — ünïcode ✓?")] }) });
  // toolcall: thinking + text + toolCall from another provider's model, its result, the reply, a
  // new question; the transcript's tool is offered.
  defs.push({ name: "toolcall", make: () => ({ systemPrompt: "You run commands.", messages: [...clone(toolVec.msgs), followUp("Now count them.")], tools: toolsOf(toolVec.msgs) }) });
  // toolresult-same: the thinking transcript up to its first tool result, its assistant turn
  // written by the very model called (so thinking and its signature are replayed as such); the
  // call answers the tool result.
  defs.push({
    name: "toolresult-same",
    make: (api, model) => {
      const msgs = clone(thinkVec.msgs);
      const cut = msgs.findIndex((m) => m.role === "toolResult");
      let end = cut + 1;
      while (end < msgs.length && msgs[end].role === "toolResult") end++;
      return { systemPrompt: "You run commands.", messages: sameModel(cut >= 0 ? msgs.slice(0, end) : msgs, api, model), tools: toolsOf(msgs) };
    },
  });
  // image: a transcript with images. No stored transcript holds one, so the tool-call
  // transcript gets an image in its first user message and in its tool result.
  defs.push({
    name: "image",
    make: () => {
      if (imageVec) return { systemPrompt: "You look at pictures.", messages: [...clone(imageVec.msgs), followUp("And now?")], tools: toolsOf(imageVec.msgs) };
      const msgs = clone(toolVec.msgs).map((m) => {
        if (m.role === "user" && typeof m.content === "string") return { ...m, content: [{ type: "text", text: m.content }, { type: "image", data: PNG_1X1, mimeType: "image/png" }] };
        if (m.role === "toolResult") return { ...m, content: [...m.content, { type: "image", data: PNG_1X1, mimeType: "image/png" }] };
        return m;
      });
      return { systemPrompt: "You look at pictures.", messages: [...msgs, followUp("What colour was the picture?")], tools: toolsOf(msgs) };
    },
  });
  // edge: the tool-call transcript's first turn with a second tool call added and left
  // unanswered, then an errored assistant message: pi-ai's transformMessages skips the errored
  // message and inserts a "No result provided" error result for the orphan (so the call answers
  // two tool results); the first user message gets an empty text block (dropped where the API
  // refuses empty text).
  defs.push({
    name: "edge",
    make: () => {
      const msgs = clone(toolVec.msgs);
      const a = msgs.findIndex((m) => m.role === "assistant" && m.content.some((b) => b.type === "toolCall"));
      const r = msgs.findIndex((m, i) => i > a && m.role === "toolResult");
      const first = msgs.findIndex((m) => m.role === "user");
      const text = (m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content);
      msgs[first] = { ...msgs[first], content: [...text(msgs[first]), { type: "text", text: "" }] };
      const call = msgs[a].content.find((b) => b.type === "toolCall");
      msgs[a].content.push({ ...call, id: `${call.id}_orphan`, arguments: { command: "pwd" } });
      const errored = { ...clone(msgs[a]), content: [{ type: "text", text: "Half an answ" }], stopReason: "error", errorMessage: "socket hang up", timestamp: 0 };
      return { systemPrompt: "You run commands.", messages: [...msgs.slice(0, a + 1), msgs[r], errored], tools: toolsOf(msgs) };
    },
  });
  // gen-thinking / gen-tools: what pi-ai itself stored against the fake server on this API (a
  // thinking turn with its real signature / reasoning item; a tool round with its real ids, up
  // to the tool results).
  for (const kind of ["thinking", "tools"]) {
    defs.push({
      name: `gen-${kind}`,
      make: (api) => {
        const c = JSON.parse(fs.readFileSync(path.join(gen, `${kind}.${api}.json`), "utf8"));
        let msgs = c.messages;
        if (kind === "thinking") msgs = [...msgs, followUp("And again — ça va?")];
        else {
          const last = msgs.findLastIndex((m) => m.role === "toolResult");
          msgs = msgs.slice(0, last + 1);
        }
        return { systemPrompt: c.systemPrompt, messages: msgs, ...(c.tools ? { tools: c.tools } : {}) };
      },
    });
  }
  for (const d of defs)
    for (const api of apis)
      for (const model of models) fs.writeFileSync(path.join(out, `${d.name}@${api}@${model}.json`), JSON.stringify(d.make(api, model), null, 1));
  fs.writeFileSync(path.join(out, "names"), defs.map((d) => d.name).join("\n") + "\n");
  process.stdout.write(`contexts: ${defs.map((d) => d.name).join(", ")} from ${[plain, toolVec, thinkVec].map((v) => path.basename(v.file)).join(", ")}` +
    `${imageVec ? `, ${path.basename(imageVec.file)}` : " (no transcript holds an image: the tool-call one gets images)"}\n`);
}

// ---------------------------------------------------------------------------------------------
// followups: for the cases whose reply is worth replaying (models tools and thinking on the
// contexts basic and gen-tools), the next call's contexts: the case's context + EACH CLIENT'S OWN
// reply + a tool result per tool call (made the same way for both), or a new user message when it
// called none. So the next request shows how each client replays the message it stored itself.
// OUTDIR/<case>n.piai.json, OUTDIR/<case>n.ours.json; the cases go to OUTDIR/followups.jsonl.
// ---------------------------------------------------------------------------------------------
function followups() {
  const dir = argv[0] ?? die("CASESDIR is required");
  const out = argv[1] ?? die("OUTDIR is required");
  fs.mkdirSync(out, { recursive: true });
  const lines = [];
  for (const c of readCases(dir)) {
    if (!["tools", "thinking"].includes(c.model) || !["basic", "gen-tools"].includes(c.context)) continue;
    const { P, O } = loadCase(dir, c);
    if (!P.role || !O.role || P.stopReason === "error" || O.stopReason === "error") continue;
    const base = JSON.parse(fs.readFileSync(c.piaiContext, "utf8"));
    const next = (reply) => {
      const msgs = [...base.messages, reply];
      const calls = reply.content.filter((b) => b.type === "toolCall");
      // A tool round goes on with the results (as the runner's loop and piai_stream --auto-tools
      // do); a reply with no tool call gets a new user message.
      for (const tc of calls)
        msgs.push({ role: "toolResult", toolCallId: tc.id, toolName: tc.name, content: [{ type: "text", text: `${tc.name} result: ok ✓ ${JSON.stringify(tc.arguments)}` }], isError: false, timestamp: 0 });
      if (!calls.length) msgs.push({ role: "user", content: "Thanks — next step?", timestamp: 0 });
      return { ...base, messages: msgs };
    };
    const name = `${c.case}n`;
    const pf = path.join(out, `${name}.piai.json`), of = path.join(out, `${name}.ours.json`);
    fs.writeFileSync(pf, JSON.stringify(next(P), null, 1));
    fs.writeFileSync(of, JSON.stringify(next(O), null, 1));
    lines.push(JSON.stringify({ case: name, api: c.api, model: c.model, context: `${c.context}+own-reply`, piaiContext: pf, oursContext: of, followup: true }));
  }
  fs.writeFileSync(path.join(out, "followups.jsonl"), lines.map((l) => l + "\n").join(""));
}

// ---------------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------------
function readCases(dir) {
  return fs.readFileSync(path.join(dir, "cases.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
function loadCase(dir, c) {
  const d = path.join(dir, c.case);
  const read = (f) => (fs.existsSync(path.join(d, f)) ? fs.readFileSync(path.join(d, f), "utf8") : "");
  const lastLine = (t) => t.trim().split("\n").filter(Boolean).pop() ?? "";
  const parse = (t, what) => {
    try { return JSON.parse(t); } catch { return { unparsable: `${what}: ${t.slice(0, 500)}` }; }
  };
  return {
    P: parse(lastLine(read("piai.out")), "pi-ai's output"),
    O: parse(lastLine(read("ours.out")), "provider_call_tool's output"),
    preq: parse(read("piai_requests.json") || "[]", "/__requests"),
    oreq: parse(read("ours_requests.json") || "[]", "/__requests"),
    perr: read("piai.err"),
    oerr: read("ours.err"),
    prc: Number(read("piai.rc").trim()),
    orc: Number(read("ours.rc").trim()),
  };
}

const requestView = (r) => ({ method: r.method, path: r.path, query: r.query, status: r.status, rule: r.rule, headers: { ...r.headers }, body: r.body });

async function compare() {
  const dir = argv[0] ?? die("CASESDIR is required");
  const rates = JSON.parse(opt("--rates") ?? die("--rates is required"));
  const nm = process.env.PIAI_NODE_MODULES || path.join(process.env.SESSIONRT_COMPAT_CACHE || path.join(os.homedir(), ".cache", "sessionrt-compat"), "piai", "node_modules");
  const piai = await import(pathToFileURL(path.join(nm, "@mariozechner", "pi-ai", "dist", "index.js")).href);
  const used = new Map();
  let pass = 0, fail = 0;
  for (const c of readCases(dir)) {
    const raw = loadCase(dir, c);
    // piai_stream.mjs's model is free: pi-ai's cost of this usage at the rates given to ours, by
    // pi-ai's own calculateCost (what its stream computes with a priced model).
    if (raw.P.usage?.cost) piai.calculateCost({ cost: rates }, raw.P.usage);
    const k = {
      api: c.api, model: c.model, context: c.context, followup: !!c.followup, rates,
      P: structuredClone(raw.P), O: structuredClone(raw.O),
      preq: Array.isArray(raw.preq) ? raw.preq.map(requestView) : raw.preq,
      oreq: Array.isArray(raw.oreq) ? raw.oreq.map(requestView) : raw.oreq,
      problems: [], skipMessage: false, skipRequests: false,
    };
    if (k.O.error !== undefined && !k.O.role) k.O = { stopReason: "error", errorMessage: k.O.error, ["(provider_call_tool failed)"]: true };
    const applied = [];
    for (const t of TOLERATED) {
      if (t.api && t.api !== c.api) continue;
      if (t.apply(k)) applied.push(t.id);
    }
    const diffs = [];
    if (!k.skipMessage) diff(k.P, k.O, "message", diffs);
    if (!k.skipRequests) diff(k.preq, k.oreq, "requests", diffs);
    // (A request the fake server refused shows as a difference unless it refused pi-ai's too:
    // `rule` is compared with the rest of the request.)
    const refused = Array.isArray(raw.oreq) ? raw.oreq.filter((r) => r.rule).map((r) => r.rule.rule) : [];
    const label = `${c.api} ${c.model} ${c.context}`;
    if (diffs.length === 0 && k.problems.length === 0) {
      pass++;
      for (const id of applied) used.set(id, (used.get(id) ?? 0) + 1);
      console.log(`PASS ${label}${applied.length ? `  (tolerated: ${applied.join(", ")})` : ""}${refused.length ? `  (both requests refused by the fake: ${refused.join(", ")})` : ""}`);
      continue;
    }
    fail++;
    console.log(`FAIL ${label}  [${c.case}]`);
    for (const p of k.problems) console.log(`  ${p}`);
    for (const x of diffs.slice(0, 30)) console.log(`  ${x.path}: pi-ai ${show(x.a)} | sessionrt ${show(x.b)}`);
    if (diffs.length > 30) console.log(`  … ${diffs.length - 30} more differences`);
    console.log(`  pi-ai (exit ${raw.prc}):     ${JSON.stringify(raw.P)}`);
    console.log(`  sessionrt (exit ${raw.orc}): ${JSON.stringify(raw.O)}`);
    if (raw.perr.trim()) console.log(`  pi-ai stderr: ${raw.perr.trim().slice(0, 1500)}`);
    if (raw.oerr.trim()) console.log(`  provider_call_tool stderr: ${raw.oerr.trim().slice(0, 1500)}`);
    console.log(`  pi-ai's requests:     ${JSON.stringify(raw.preq)}`);
    console.log(`  sessionrt's requests: ${JSON.stringify(raw.oreq)}`);
  }
  const plog = opt("--proxy-log");
  if (plog && fs.existsSync(plog) && fs.readFileSync(plog, "utf8").trim()) console.log(`proxy log:\n${fs.readFileSync(plog, "utf8").trim()}`);
  console.log(`tolerated differences seen (cases): ${[...used].map(([id, n]) => `${id} ${n}`).join(", ") || "none"}`);
  console.log(`${pass} cases agree, ${fail} differ`);
  process.exitCode = fail ? 1 : 0;
}

function show(v) {
  const s = v === undefined ? "(absent)" : JSON.stringify(v);
  return s.length > 300 ? s.slice(0, 300) + "…" : s;
}

function diff(a, b, p, out) {
  if (a === b) return;
  if (typeof a === "number" && typeof b === "number" && Math.abs(a - b) <= 1e-9) return;
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a)) {
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) diff(a[i], b[i], `${p}[${i}]`, out);
      return;
    }
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[k], b[k], `${p}.${k}`, out);
    return;
  }
  out.push({ path: p, a, b });
}

if (cmd === "proxy") proxy();
else if (cmd === "contexts") contexts();
else if (cmd === "followups") followups();
else if (cmd === "compare") await compare();
else die("usage: compare_piai.mjs proxy|contexts|followups|compare … (see the header comment)");
