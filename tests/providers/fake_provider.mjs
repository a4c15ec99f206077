#!/usr/bin/env node
// Fake LLM provider server for tests and benchmarks (Node >= 20, no npm dependencies).
//
// One HTTP server on 127.0.0.1 serving four provider APIs, checking every request against the
// API's documented rules and streaming SSE the way the real APIs do:
//
//   API                  route                                                base URL for clients
//   openai-completions   POST /v1/chat/completions                           http://127.0.0.1:N/v1
//   openai-responses     POST /v1/responses                                  http://127.0.0.1:N/v1
//   anthropic-messages   POST /v1/messages                                   http://127.0.0.1:N
//   google-generative-ai POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//                                                                             http://127.0.0.1:N/v1beta
// Control endpoints:
//   GET  /__requests[?since=SEQ]  JSON list of the requests received (ring of --log-max): seq, method,
//                                 path, query, api, model, headers (x-api-key / authorization /
//                                 x-goog-api-key / api-key values redacted to their length), parsed
//                                 body, bodyBytes, status, rule (the failed check {rule, message} or null),
//                                 behaviour, conversation.
//   GET  /__stats                 counts: requests, byApi, byStatus, rejected (400s by "api:rule"),
//                                 unauthorized, streamsStarted / streamsCompleted, clientClosedBeforeEnd
//                                 (connections the client closed before the stream ended: "the server
//                                 sees the close"), serverAborted (reset / silent timeout), active
//                                 streams, connections {open, total}, splits {pieces, utf8, crlf,
//                                 midline}, slow {streams, maxActive, writes, catchUpWrites (writes that
//                                 carried >1 late chunk), maxBehindGroups, firstWriteMsMax}, and
//                                 eventLoopDelayMs {p50, p99, max} (is the server keeping up?).
//   POST /__reset                 clears the log, the counts and the per-conversation state.
//   GET  /__health                {"ok":true}
//
// Usage: node fake_provider.mjs [--port N] [--key K] [--seed S] [--crlf] [--overflow-messages K]
//          [--overflow-bytes B] [--lifetime-s S] [--log-max N] [--max-pieces N] [--piece-delay-ms MS]
//          [--silent-ms MS] [--max-body-bytes N (413 above; default 64 MiB)] [--google-real-auth]
//          [--stdin] [--verbose]
// Prints one line {"port":N} on stdout once listening. Exits on SIGTERM / SIGINT / SIGHUP, when its
// parent process goes away (ppid watch), on stdin EOF with --stdin, and after --lifetime-s seconds
// (default 3600; 0 = no limit).
//
// Auth: the expected key is --key (default "test-key"). Anthropic: x-api-key; OpenAI: Authorization:
// Bearer; Google: x-goog-api-key (or ?key=). A missing or wrong key -> 401 in the API's error shape
// (Google: status UNAUTHENTICATED; --google-real-auth answers as Gemini really does: 400
// API_KEY_INVALID for a wrong key, 403 PERMISSION_DENIED for a missing one).
//
// Rules checked (first broken rule -> 400 in the API's error shape; the rule name is in /__requests
// and /__stats):
//   anthropic: version_header (anthropic-version), model, max_tokens, stream (must be true), messages
//     (non-empty array), role (user|assistant), first_user, alternate_roles, empty_content,
//     empty_text (no empty/whitespace text block, system blocks included), tool_id_pattern
//     (^[a-zA-Z0-9_-]+$ for tool_use.id and tool_result.tool_use_id), tool_id_unique,
//     tool_result_orphan (every tool_result in the user message right after the assistant message
//     holding its tool_use), tool_use_unanswered (every tool_use answered in the next message),
//     thinking_signature (replayed thinking blocks carry a signature), tool_name.
//   openai-completions: model, messages, role, stream, stream_options (include_usage: true),
//     tool_without_call (each tool message follows an assistant message with tool_calls holding
//     its tool_call_id), tool_call_unanswered (every tool call answered before the next
//     user/assistant/system message or the end), tool_arguments_type (arguments is a JSON string),
//     assistant_content (content or tool_calls).
//   openai-responses: model, input, stream, call_id_unknown (function_call_output.call_id matches
//     an earlier function_call.call_id), function_call_unanswered, function_call_id_prefix (item id
//     starts with "fc"), reasoning_item (replayed reasoning carries encrypted_content),
//     tool_arguments_type.
//   google: alt_sse (?alt=sse), contents, role (user|model only), empty_parts, empty_part,
//     function_call_position (a functionCall turn follows a user turn or a functionResponse turn),
//     function_response_position (each functionResponse turn follows the model turn holding the
//     functionCall with the same name), function_response_count.
//
// Behaviour chosen by the model id: NAME[:ARG...][+MODIFIER...]
//   echo            (also any unknown id) text "Echo: <last user text> — héllo 👋 — ünïcode ✓".
//   tools           first call: 2 tool calls (the request's tools, args made from their JSON
//                   schema; fallback names get_weather/get_time); once the context holds their
//                   results: text "Tool results: name → result; …" naming every result since the last
//                   user message. tools-N (e.g. tools-3) keeps asking for N rounds (round 1: 2 calls,
//                   later rounds: 1 call). Google function calls carry no id (as Gemini).
//   thinking        thinking (Anthropic thinking + signature_delta; OpenAI delta.reasoning_content;
//                   Responses reasoning item with summary + encrypted_content; Google thought parts +
//                   thoughtSignature), then the echo text.
//   length          echo text, then the API's max-tokens stop (Anthropic max_tokens; OpenAI
//                   finish_reason length; Responses a response.incomplete event, status incomplete;
//                   Google MAX_TOKENS).
//   overflow[:K]    400 with the provider's context-overflow text (Anthropic "prompt is too long:
//                   213462 tokens > 200000 maximum"; OpenAI "This model's maximum context length is
//                   128000 tokens. However, your messages resulted in … tokens. Please reduce the length
//                   of the messages."; Responses "Your input exceeds the context window of this model…";
//                   Google "The input token count (…) exceeds the maximum number of tokens allowed
//                   (1048576).") unless the request is short: at most K messages (default
//                   --overflow-messages, 4) and, with --overflow-bytes B, a body of at most B bytes;
//                   a short request gets the echo reply (so compact-and-retry succeeds).
//   rate-limit[:S]  429 in the API's shape with retry-after: S (default 1).
//   rate-limit-ms[:MS]  429 with only retry-after-ms: MS (default 250).
//   overloaded      Anthropic 529 overloaded_error; OpenAI 503 server_error; Google 503 UNAVAILABLE.
//   overloaded-stream  200, a few deltas, then the streaming error (Anthropic event: error
//                   overloaded_error; OpenAI data: {"error":…}; Responses event: error; Google data:
//                   {"error":…}), then the body ends.
//   error-500       500 in the API's shape.
//   reset-mid-stream  200, some events and half of the next, then the socket is reset (RST).
//   truncated       200, some events, then the body ends cleanly before the API's end event(s).
//   silent          200 and headers, then nothing (closed after --silent-ms, default 120000).
//   bad-key-always  401 whatever the key.
//   slow:C:MS       stream C text deltas MS ms apart (default 300:20): the benchmark load (10,000
//                   concurrent streams are held: ~15 KB per connection). One precomputed body per
//                   (api, model, line ending), shared by all streams (same ids), written by one global
//                   ticker as zero-copy slices: the head and first delta at once, then one delta per MS
//                   (never split). A stream that fell behind (busy CPU, or a client not reading: no
//                   write while the socket needs drain) gets all its due deltas in one write; see
//                   /__stats slow.catchUpWrites.
//   Failure modes (rate-limit*, overloaded*, error-500, reset-mid-stream, truncated, silent) fail
//   every time; with "-once" (e.g. rate-limit-once:2, error-500-once) only the first request of a
//   conversation fails and later ones get the echo reply. A conversation is api + model + system
//   prompt + first user text (SDK retries therefore count as the same conversation); /__reset
//   forgets them.
//   Modifiers: +crlf / +cr (line endings; default LF, or --crlf), +nosplit (write the body in one
//   write), +comments (SSE comment lines ": keep-alive" between events). E.g. "tools-3+crlf".
//   Gemini shape: every chunk carries usageMetadata; the last content chunk carries finishReason
//   and the final counts; thoughts are parts with thought:true; thoughtSignature sits on the first
//   functionCall part (tools) or the last text part (thinking).
//
// Stream bytes are written split at awkward places - inside multi-byte UTF-8 characters, between CR
// and LF, mid-line - in up to --max-pieces writes --piece-delay-ms apart (default 48 pieces, 1 ms),
// chosen by a PRNG seeded from --seed + conversation + its request number: deterministic.
// Usage reported: input tokens = ceil(body bytes / 4); the first request of a conversation reports
// half of them as cache writes (Anthropic cache_creation_input_tokens), later ones half as cache
// reads (cache_read_input_tokens / cached_tokens / cachedContentTokenCount); output tokens =
// ceil(output chars / 4).
import http from "node:http";
import crypto from "node:crypto";
import { monitorEventLoopDelay } from "node:perf_hooks";

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------
const opts = {
  port: 0,
  key: "test-key",
  seed: 1,
  crlf: false,
  overflowMessages: 4,
  overflowBytes: 0,
  lifetimeS: 3600,
  logMax: 5000,
  maxPieces: 48,
  pieceDelayMs: 1,
  silentMs: 120000,
  googleRealAuth: false,
  stdin: false,
  verbose: false,
  maxBodyBytes: 64 * 1024 * 1024,
};
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const k = a[i];
    const v = () => {
      if (i + 1 >= a.length) die(`missing value for ${k}`);
      return a[++i];
    };
    switch (k) {
      case "--port": opts.port = Number(v()); break;
      case "--key": opts.key = v(); break;
      case "--seed": opts.seed = Number(v()); break;
      case "--crlf": opts.crlf = true; break;
      case "--overflow-messages": opts.overflowMessages = Number(v()); break;
      case "--overflow-bytes": opts.overflowBytes = Number(v()); break;
      case "--lifetime-s": opts.lifetimeS = Number(v()); break;
      case "--log-max": opts.logMax = Number(v()); break;
      case "--max-pieces": opts.maxPieces = Number(v()); break;
      case "--piece-delay-ms": opts.pieceDelayMs = Number(v()); break;
      case "--silent-ms": opts.silentMs = Number(v()); break;
      case "--max-body-bytes": opts.maxBodyBytes = Number(v()); break;
      case "--google-real-auth": opts.googleRealAuth = true; break;
      case "--stdin": opts.stdin = true; break;
      case "--verbose": opts.verbose = true; break;
      case "-h": case "--help":
        process.stdout.write("see the header comment of fake_provider.mjs\n");
        process.exit(0);
      default: die(`unknown argument ${k}`);
    }
  }
}
function die(msg) {
  process.stderr.write(`fake_provider: ${msg}\n`);
  process.exit(2);
}
const log = (...m) => { if (opts.verbose) process.stderr.write(`fake_provider: ${m.join(" ")}\n`); };

// ---------------------------------------------------------------------------------------------
// Deterministic helpers
// ---------------------------------------------------------------------------------------------
function hash32(str) {
  const h = crypto.createHash("sha256").update(str).digest();
  return h.readUInt32LE(0);
}
function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
function idFrom(prefix, seedStr, len = 24) {
  const h = crypto.createHash("sha256").update(seedStr).digest();
  let s = "";
  for (let i = 0; i < len; i++) s += B62[h[i % h.length] % 62];
  return prefix + s;
}
function b64From(seedStr, bytes = 48) {
  const parts = [];
  let n = 0;
  while (n < bytes) { const h = crypto.createHash("sha256").update(seedStr + ":" + n).digest(); parts.push(h); n += h.length; }
  return Buffer.concat(parts).subarray(0, bytes).toString("base64");
}
// Split a string into fragments of 1..max code points (never inside a surrogate pair).
let fragmentsOverride = null; // set while building the shared slow body
function fragments(text, rng, max = 6) {
  if (fragmentsOverride) return fragmentsOverride(text);
  const cps = Array.from(text);
  const out = [];
  let i = 0;
  while (i < cps.length) {
    const n = 1 + Math.floor(rng() * max);
    out.push(cps.slice(i, i + n).join(""));
    i += n;
  }
  return out;
}
const approxTokens = (chars) => Math.max(1, Math.ceil(chars / 4));
const UNI = "héllo 👋 — ünïcode ✓";

// ---------------------------------------------------------------------------------------------
// State: request log, stats, conversations
// ---------------------------------------------------------------------------------------------
let requestLog = [];
let seqCounter = 0;
let conversations = new Map();
let stats;
function resetStats() {
  stats = {
    requests: 0, byApi: {}, byStatus: {}, rejected: {}, unauthorized: 0,
    streamsStarted: 0, streamsCompleted: 0, clientClosedBeforeEnd: 0, serverAborted: 0,
    splits: { pieces: 0, utf8: 0, crlf: 0, midline: 0 },
    slow: { streams: 0, maxActive: 0, writes: 0, catchUpWrites: 0, maxBehindGroups: 0, firstWriteMsMax: 0 },
  };
  loopDelay?.reset();
}
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
resetStats();
let activeStreams = 0;
let openConnections = 0;
let totalConnections = 0;
const bump = (obj, k) => { obj[k] = (obj[k] || 0) + 1; };

function redactHeaders(h) {
  const out = {};
  for (const [k, v] of Object.entries(h)) {
    if (k === "x-api-key" || k === "x-goog-api-key" || k === "api-key") out[k] = `[redacted len=${String(v).length}]`;
    else if (k === "authorization") {
      const m = /^(\S+)\s+(.*)$/.exec(String(v));
      out[k] = m ? `${m[1]} [redacted len=${m[2].length}]` : `[redacted len=${String(v).length}]`;
    } else out[k] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Error shapes
// ---------------------------------------------------------------------------------------------
const ANTHROPIC_TYPES = { 400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error" };
const GOOGLE_STATUS = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE" };
function errorBody(api, status, message, extra = {}) {
  if (api === "anthropic-messages") {
    return { type: "error", error: { type: extra.type || ANTHROPIC_TYPES[status] || "api_error", message }, request_id: extra.requestId };
  }
  if (api === "google-generative-ai") {
    const e = { code: status, message, status: extra.status || GOOGLE_STATUS[status] || "UNKNOWN" };
    if (extra.details) e.details = extra.details;
    return { error: e };
  }
  return { error: { message, type: extra.type || (status >= 500 ? "server_error" : "invalid_request_error"), param: extra.param ?? null, code: extra.code ?? null } };
}
function sendJson(res, status, body, headers = {}) {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": data.length, ...headers });
  res.end(data);
}

// ---------------------------------------------------------------------------------------------
// Validation per API: returns null or {rule, message, param?}
// ---------------------------------------------------------------------------------------------
const TOOL_ID_RE = /^[a-zA-Z0-9_-]+$/;
const isObj = (x) => x !== null && typeof x === "object" && !Array.isArray(x);
const bad = (rule, message, param) => ({ rule, message, param });

function validateAnthropic(body, headers) {
  if (!headers["anthropic-version"]) return bad("version_header", "anthropic-version: header is required");
  if (typeof body.model !== "string" || !body.model) return bad("model", "model: Field required");
  if (body.max_tokens === undefined || body.max_tokens === null) return bad("max_tokens", "max_tokens: Field required");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return bad("max_tokens", "max_tokens: Input should be a valid integer greater than or equal to 1");
  if (body.stream !== true) return bad("stream", "stream: this endpoint (fake) serves only streaming requests; set stream: true");
  if (Array.isArray(body.system)) {
    for (let j = 0; j < body.system.length; j++) {
      const b = body.system[j];
      if (b?.type === "text" && (typeof b.text !== "string" || b.text.trim() === "")) return bad("empty_text", `system.${j}.text: text content blocks must contain non-whitespace text`);
    }
  }
  if (Array.isArray(body.tools)) {
    for (let j = 0; j < body.tools.length; j++) {
      const t = body.tools[j];
      if (!t || typeof t.name !== "string" || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) return bad("tool_name", `tools.${j}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    }
  }
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return bad("messages", "messages: at least one message is required");
  const blocksOf = (m) => (typeof m.content === "string" ? [{ type: "text", text: m.content }] : Array.isArray(m.content) ? m.content : []);
  const seenIds = new Set();
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (!isObj(m) || (m.role !== "user" && m.role !== "assistant")) return bad("role", `messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (i === 0 && m.role !== "user") return bad("first_user", "messages: first message must use the \"user\" role");
    if (i > 0 && msgs[i - 1].role === m.role) return bad("alternate_roles", `messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`);
    const isFinalAssistant = i === msgs.length - 1 && m.role === "assistant";
    if (typeof m.content === "string") {
      if (m.content.trim() === "" && !isFinalAssistant) return bad("empty_content", `messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    } else if (!Array.isArray(m.content) || (m.content.length === 0 && !isFinalAssistant)) {
      return bad("empty_content", `messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const blocks = blocksOf(m);
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (!isObj(b)) return bad("content", `messages.${i}.content.${j}: Input should be a valid dictionary`);
      if (b.type === "text" && typeof m.content !== "string" && (typeof b.text !== "string" || b.text.trim() === "")) return bad("empty_text", `messages.${i}.content.${j}.text: text content blocks must contain non-whitespace text`);
      if (b.type === "tool_use") {
        if (typeof b.id !== "string" || !TOOL_ID_RE.test(b.id)) return bad("tool_id_pattern", `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        if (seenIds.has(b.id)) return bad("tool_id_unique", `messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
        seenIds.add(b.id);
        if (m.role !== "assistant") return bad("role", `messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`);
      }
      if (b.type === "tool_result") {
        if (typeof b.tool_use_id !== "string" || !TOOL_ID_RE.test(b.tool_use_id)) return bad("tool_id_pattern", `messages.${i}.content.${j}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
        if (m.role !== "user") return bad("role", `messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`);
        if (Array.isArray(b.content)) {
          for (let k = 0; k < b.content.length; k++) {
            const c = b.content[k];
            if (c?.type === "text" && (typeof c.text !== "string" || c.text.trim() === "")) return bad("empty_text", `messages.${i}.content.${j}.content.${k}.text: text content blocks must contain non-whitespace text`);
          }
        }
      }
      if (b.type === "thinking" && (typeof b.signature !== "string" || b.signature === "")) return bad("thinking_signature", `messages.${i}.content.${j}.thinking.signature: Field required`);
    }
  }
  // tool_use / tool_result pairing
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    const blocks = blocksOf(m);
    if (m.role === "user") {
      const prev = i > 0 ? msgs[i - 1] : null;
      const prevIds = new Set(prev ? blocksOf(prev).filter((b) => b.type === "tool_use").map((b) => b.id) : []);
      for (let j = 0; j < blocks.length; j++) {
        const b = blocks[j];
        if (b.type === "tool_result" && !prevIds.has(b.tool_use_id)) {
          return bad("tool_result_orphan", `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
        }
      }
    } else {
      const ids = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
      if (ids.length === 0) continue;
      const next = msgs[i + 1];
      const answered = new Set(next && next.role === "user" ? blocksOf(next).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) : []);
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length) return bad("tool_use_unanswered", `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`);
    }
  }
  return null;
}

function validateCompletions(body) {
  if (typeof body.model !== "string" || !body.model) return bad("model", "you must provide a model parameter", "model");
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) return bad("messages", "[] is too short - 'messages'", "messages");
  if (body.stream !== true) return bad("stream", "This fake endpoint serves only streaming requests: set 'stream' to true.", "stream");
  if (!isObj(body.stream_options) || body.stream_options.include_usage !== true) return bad("stream_options", "stream_options.include_usage must be true: usage is reported in the last chunk only when requested.", "stream_options");
  let pending = null; // Map id -> index of assistant message
  let lastCallsIdx = -1;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    const roles = ["system", "developer", "user", "assistant", "tool"];
    if (!isObj(m) || !roles.includes(m.role)) return bad("role", `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`, `messages.[${i}].role`);
    if (m.role === "tool") {
      if (!pending || !pending.has(m.tool_call_id)) return bad("tool_without_call", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      pending.delete(m.tool_call_id);
      continue;
    }
    if (pending && pending.size > 0) {
      return bad("tool_call_unanswered", `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending.keys()].join(", ")}`, `messages.[${lastCallsIdx}].role`);
    }
    pending = null;
    if (m.role === "assistant") {
      const hasCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0;
      const c = m.content;
      const hasContent = typeof c === "string" ? c.length > 0 : Array.isArray(c) && c.length > 0;
      if (!hasCalls && !hasContent) return bad("assistant_content", "Invalid value for 'content': expected a string, got null.", `messages.[${i}].content`);
      if (hasCalls) {
        pending = new Map();
        lastCallsIdx = i;
        for (let j = 0; j < m.tool_calls.length; j++) {
          const tc = m.tool_calls[j];
          if (!isObj(tc) || typeof tc.id !== "string" || !tc.id) return bad("tool_call_id", `Missing required parameter: 'messages[${i}].tool_calls[${j}].id'.`, `messages.[${i}].tool_calls.[${j}].id`);
          if (typeof tc.function?.name !== "string" || !tc.function.name) return bad("tool_call_name", `Missing required parameter: 'messages[${i}].tool_calls[${j}].function.name'.`);
          if (typeof tc.function?.arguments !== "string") return bad("tool_arguments_type", `Invalid type for 'messages[${i}].tool_calls[${j}].function.arguments': expected a string, but got ${typeof tc.function?.arguments} instead.`);
          pending.set(tc.id, i);
        }
      }
    }
  }
  if (pending && pending.size > 0) {
    return bad("tool_call_unanswered", `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending.keys()].join(", ")}`, `messages.[${lastCallsIdx}].role`);
  }
  return null;
}

function validateResponses(body) {
  if (typeof body.model !== "string" || !body.model) return bad("model", "Missing required parameter: 'model'.", "model");
  if (body.stream !== true) return bad("stream", "This fake endpoint serves only streaming requests: set 'stream' to true.", "stream");
  const input = body.input;
  if (typeof input === "string") return null;
  if (!Array.isArray(input)) return bad("input", "Invalid type for 'input': expected one of a string or array of input items.", "input");
  const calls = new Map();
  const answered = new Set();
  for (let i = 0; i < input.length; i++) {
    const it = input[i];
    if (!isObj(it)) return bad("input", `Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`);
    const type = it.type ?? (it.role ? "message" : undefined);
    if (type === "message") {
      if (!["user", "assistant", "system", "developer"].includes(it.role)) return bad("role", `Invalid value: '${it.role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `input[${i}].role`);
    } else if (type === "function_call") {
      if (typeof it.call_id !== "string" || !it.call_id) return bad("call_id", `Missing required parameter: 'input[${i}].call_id'.`, `input[${i}].call_id`);
      if (it.id !== undefined && it.id !== null && !String(it.id).startsWith("fc")) return bad("function_call_id_prefix", `Invalid 'input[${i}].id': '${it.id}'. Expected an ID that begins with 'fc'.`, `input[${i}].id`);
      if (typeof it.arguments !== "string") return bad("tool_arguments_type", `Invalid type for 'input[${i}].arguments': expected a string.`, `input[${i}].arguments`);
      calls.set(it.call_id, i);
    } else if (type === "function_call_output") {
      if (!calls.has(it.call_id)) return bad("call_id_unknown", `No tool call found for function call output with call_id ${it.call_id}.`, "input");
      answered.add(it.call_id);
    } else if (type === "reasoning") {
      if (body.store === false && !it.encrypted_content) return bad("reasoning_item", `Item with id '${it.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`, "input");
    }
  }
  for (const id of calls.keys()) {
    if (!answered.has(id)) return bad("function_call_unanswered", `No tool output found for function call ${id}.`, "input");
  }
  return null;
}

function validateGoogle(body, query) {
  if (query.get("alt") !== "sse") return bad("alt_sse", "This fake endpoint serves only ?alt=sse streaming.");
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return bad("contents", "* GenerateContentRequest.contents: contents is not specified");
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    if (!isObj(c) || (c.role !== "user" && c.role !== "model")) return bad("role", "Please use a valid role: user, model.");
    if (!Array.isArray(c.parts) || c.parts.length === 0) return bad("empty_parts", `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    for (let j = 0; j < c.parts.length; j++) {
      const p = c.parts[j];
      if (!isObj(p) || !("text" in p || "inlineData" in p || "functionCall" in p || "functionResponse" in p || "fileData" in p || "executableCode" in p || "codeExecutionResult" in p)) {
        return bad("empty_part", `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`);
      }
    }
  }
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const calls = c.parts.filter((p) => p.functionCall);
    const resps = c.parts.filter((p) => p.functionResponse);
    if (calls.length) {
      const prev = contents[i - 1];
      const okPrev = prev && prev.role === "user";
      if (c.role !== "model" || !okPrev) return bad("function_call_position", "Please ensure that function call turn comes immediately after a user turn or after a function response turn.");
    }
    if (resps.length) {
      const prev = contents[i - 1];
      const prevCalls = prev && prev.role === "model" ? prev.parts.filter((p) => p.functionCall) : [];
      if (c.role !== "user" || prevCalls.length === 0) return bad("function_response_position", "Please ensure that function response turn comes immediately after a function call turn.");
      if (prevCalls.length !== resps.length) return bad("function_response_count", "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.");
      const names = prevCalls.map((p) => p.functionCall.name).sort();
      const rnames = resps.map((p) => p.functionResponse.name).sort();
      if (names.join("\u0000") !== rnames.join("\u0000")) return bad("function_response_position", `Please ensure that function response turn comes immediately after a function call turn (function response names ${rnames.join(", ")} do not match function calls ${names.join(", ")}).`);
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Normalized view of a request context: {system, msgs:[{role:user|assistant|tool, text, calls, results}], tools, count}
// ---------------------------------------------------------------------------------------------
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (typeof c === "string" ? c : (c?.type === "text" || c?.type === "input_text" || c?.type === "output_text") ? c.text ?? "" : "")).filter(Boolean).join("\n");
}
function normalize(api, body) {
  const msgs = [];
  let system = "";
  let tools = [];
  let count = 0;
  if (api === "anthropic-messages") {
    system = typeof body.system === "string" ? body.system : textOf(body.system);
    tools = (body.tools || []).map((t) => ({ name: t.name, parameters: t.input_schema }));
    count = body.messages.length;
    const names = new Map();
    for (const m of body.messages) {
      const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
      if (m.role === "user") {
        const results = blocks.filter((b) => b.type === "tool_result").map((b) => ({ id: b.tool_use_id, name: names.get(b.tool_use_id) || "?", text: textOf(b.content) }));
        if (results.length) msgs.push({ role: "tool", text: "", calls: [], results });
        const text = textOf(blocks.filter((b) => b.type === "text"));
        if (text) msgs.push({ role: "user", text, calls: [], results: [] });
      } else {
        const calls = blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: b.input }));
        for (const c of calls) names.set(c.id, c.name);
        msgs.push({ role: "assistant", text: textOf(blocks.filter((b) => b.type === "text")), calls, results: [] });
      }
    }
  } else if (api === "openai-completions") {
    tools = (body.tools || []).map((t) => ({ name: t.function?.name, parameters: t.function?.parameters }));
    const names = new Map();
    for (const m of body.messages) {
      if (m.role === "system" || m.role === "developer") { system += textOf(m.content); continue; }
      count++;
      if (m.role === "user") msgs.push({ role: "user", text: textOf(m.content), calls: [], results: [] });
      else if (m.role === "assistant") {
        const calls = (m.tool_calls || []).map((tc) => ({ id: tc.id, name: tc.function.name, args: safeParse(tc.function.arguments) }));
        for (const c of calls) names.set(c.id, c.name);
        msgs.push({ role: "assistant", text: textOf(m.content), calls, results: [] });
      } else if (m.role === "tool") {
        const r = { id: m.tool_call_id, name: names.get(m.tool_call_id) || "?", text: textOf(m.content) };
        const last = msgs[msgs.length - 1];
        if (last && last.role === "tool") last.results.push(r);
        else msgs.push({ role: "tool", text: "", calls: [], results: [r] });
      }
    }
  } else if (api === "openai-responses") {
    system = typeof body.instructions === "string" ? body.instructions : "";
    tools = (body.tools || []).filter((t) => t.type === "function").map((t) => ({ name: t.name, parameters: t.parameters }));
    const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
    const names = new Map();
    for (const it of input) {
      const type = it.type ?? (it.role ? "message" : undefined);
      if (type === "message") {
        if (it.role === "system" || it.role === "developer") { system += textOf(it.content); continue; }
        count++;
        if (it.role === "user") msgs.push({ role: "user", text: textOf(it.content), calls: [], results: [] });
        else {
          const last = msgs[msgs.length - 1];
          if (last && last.role === "assistant" && last.open) last.text += textOf(it.content);
          else msgs.push({ role: "assistant", text: textOf(it.content), calls: [], results: [], open: true });
        }
      } else if (type === "function_call") {
        names.set(it.call_id, it.name);
        let last = msgs[msgs.length - 1];
        if (!(last && last.role === "assistant" && last.open)) { last = { role: "assistant", text: "", calls: [], results: [], open: true }; msgs.push(last); count++; }
        last.calls.push({ id: it.call_id, name: it.name, args: safeParse(it.arguments) });
      } else if (type === "function_call_output") {
        const r = { id: it.call_id, name: names.get(it.call_id) || "?", text: typeof it.output === "string" ? it.output : textOf(it.output) };
        const last = msgs[msgs.length - 1];
        if (last && last.role === "tool") last.results.push(r);
        else { msgs.push({ role: "tool", text: "", calls: [], results: [r] }); count++; }
      } else if (type === "reasoning") {
        let last = msgs[msgs.length - 1];
        if (!(last && last.role === "assistant" && last.open)) { msgs.push({ role: "assistant", text: "", calls: [], results: [], open: true }); count++; }
      }
    }
  } else if (api === "google-generative-ai") {
    const si = body.systemInstruction;
    system = typeof si === "string" ? si : si?.parts ? si.parts.map((p) => p.text || "").join("") : "";
    tools = [];
    for (const t of body.tools || []) for (const d of t.functionDeclarations || []) tools.push({ name: d.name, parameters: d.parametersJsonSchema || d.parameters });
    count = body.contents.length;
    for (const c of body.contents) {
      if (c.role === "user") {
        const results = c.parts.filter((p) => p.functionResponse).map((p) => ({ id: p.functionResponse.id || "", name: p.functionResponse.name, text: respText(p.functionResponse.response) }));
        if (results.length) msgs.push({ role: "tool", text: "", calls: [], results });
        const text = c.parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) => p.text).join("\n");
        if (text) msgs.push({ role: "user", text, calls: [], results: [] });
      } else {
        msgs.push({ role: "assistant", text: c.parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) => p.text).join(""), calls: c.parts.filter((p) => p.functionCall).map((p) => ({ id: p.functionCall.id || "", name: p.functionCall.name, args: p.functionCall.args })), results: [] });
      }
    }
  }
  return { system, msgs, tools, count };
}
function respText(r) {
  if (r == null) return "";
  if (typeof r === "string") return r;
  if (typeof r.output === "string") return r.output;
  if (typeof r.error === "string") return r.error;
  return JSON.stringify(r);
}
function safeParse(s) { try { return JSON.parse(s); } catch { return {}; } }

// ---------------------------------------------------------------------------------------------
// Behaviour -> script {blocks:[{kind:text|thinking|tool, ...}], stop:stop|tool|length}
// ---------------------------------------------------------------------------------------------
function parseModel(model) {
  const [head, ...mods] = String(model).split("+");
  const [name, ...args] = head.split(":");
  let base = name;
  let once = false;
  if (base.endsWith("-once")) { once = true; base = base.slice(0, -5); }
  return { base, once, args, mods: new Set(mods) };
}
const FAILURES = new Set(["rate-limit", "rate-limit-ms", "overloaded", "overloaded-stream", "error-500", "reset-mid-stream", "truncated", "silent"]);

function lastUserIndex(ctx) {
  for (let i = ctx.msgs.length - 1; i >= 0; i--) if (ctx.msgs[i].role === "user") return i;
  return -1;
}
function echoText(ctx) {
  const i = lastUserIndex(ctx);
  let t = i >= 0 ? ctx.msgs[i].text : "";
  t = t.replace(/\s+/g, " ").trim();
  if (Array.from(t).length > 200) t = Array.from(t).slice(0, 200).join("") + "…";
  return `Echo: ${t || "(nothing)"} — ${UNI}`;
}
function argsFromSchema(schema, round, idx) {
  const props = isObj(schema?.properties) ? schema.properties : null;
  if (!props || Object.keys(props).length === 0) return { query: `héllo 👋 ${round}.${idx}` };
  const out = {};
  let k = 0;
  for (const [name, s] of Object.entries(props)) {
    const t = Array.isArray(s?.type) ? s.type[0] : s?.type;
    if (Array.isArray(s?.enum) && s.enum.length) out[name] = s.enum[0];
    else if (t === "integer" || t === "number") out[name] = round * 10 + idx + 1 + k;
    else if (t === "boolean") out[name] = true;
    else if (t === "array") out[name] = [`ä-${round}.${idx}`];
    else if (t === "object") out[name] = {};
    else out[name] = k === 0 ? `Zürich-${round}.${idx}` : `vålue-${round}.${idx}.${k}`;
    k++;
  }
  return out;
}
function toolsScript(ctx, rounds, idBase) {
  const lu = lastUserIndex(ctx);
  const after = ctx.msgs.slice(lu + 1);
  const done = after.filter((m) => m.role === "assistant" && m.calls.length > 0).length;
  if (done < rounds) {
    const tools = ctx.tools.length ? ctx.tools : [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } }, { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string" } } } }];
    const n = done === 0 ? 2 : 1;
    const blocks = [];
    if (done === 0) blocks.push({ kind: "text", text: `Calling tools — ${UNI}` });
    for (let i = 0; i < n; i++) {
      const t = tools[(done + i) % tools.length];
      blocks.push({ kind: "tool", name: t.name, args: argsFromSchema(t.parameters, done + 1, i), idSeed: `${idBase}:${done}:${i}` });
    }
    return { blocks, stop: "tool" };
  }
  const results = after.filter((m) => m.role === "tool").flatMap((m) => m.results);
  const named = results.map((r) => {
    let t = r.text.replace(/\s+/g, " ").trim();
    if (Array.from(t).length > 120) t = Array.from(t).slice(0, 120).join("") + "…";
    return `${r.name} → ${t}`;
  });
  return { blocks: [{ kind: "text", text: `Tool results: ${named.join("; ") || "(none)"} — ${UNI}` }], stop: "stop" };
}

// ---------------------------------------------------------------------------------------------
// Encoders: script -> list of SSE events {event?, data(string)}; also "cut" points for failures
// ---------------------------------------------------------------------------------------------
function usageFor(ctx) {
  const total = approxTokens(ctx.bodyBytes);
  const half = Math.floor(total / 2);
  const first = ctx.convIndex === 0;
  return { total, cacheRead: first ? 0 : half, cacheWrite: first ? half : 0 };
}
function outChars(script) {
  let n = 0;
  for (const b of script.blocks) n += b.kind === "tool" ? JSON.stringify(b.args).length + b.name.length : Array.from(b.text).length;
  return n;
}

function encodeAnthropic(script, ctx, rng) {
  const ev = [];
  const push = (event, obj, d) => ev.push({ event, data: JSON.stringify(obj), d });
  const u = usageFor(ctx);
  const input = u.total - u.cacheRead - u.cacheWrite;
  push("message_start", { type: "message_start", message: { id: ctx.ids.message, type: "message", role: "assistant", model: ctx.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead, output_tokens: 1, service_tier: "standard" } } });
  let index = 0;
  for (const b of script.blocks) {
    if (b.kind === "thinking") {
      push("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      if (index === 0) push("ping", { type: "ping" });
      for (const f of fragments(b.text, rng)) push("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: f } });
      push("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.signature } });
    } else if (b.kind === "text") {
      push("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      if (index === 0) push("ping", { type: "ping" });
      for (const f of fragments(b.text, rng)) push("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: f } }, true);
    } else {
      push("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: idFrom("toolu_01", b.idSeed, 22), name: b.name, input: {} } });
      if (index === 0) push("ping", { type: "ping" });
      push("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } });
      for (const f of fragments(JSON.stringify(b.args), rng, 10)) push("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: f } });
    }
    push("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  const stop = script.stop === "tool" ? "tool_use" : script.stop === "length" ? "max_tokens" : "end_turn";
  const endAt = ev.length;
  push("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { input_tokens: input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead, output_tokens: approxTokens(outChars(script)) } });
  push("message_stop", { type: "message_stop" });
  return { events: ev, endAt };
}
function anthropicStreamError() {
  return { event: "error", data: JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }) };
}

function encodeCompletions(script, ctx, rng) {
  const ev = [];
  const base = { id: ctx.ids.completion, object: "chat.completion.chunk", created: 1750000000, model: ctx.model, service_tier: "default", system_fingerprint: "fp_fake0001" };
  const chunk = (delta, finish = null, d) => ev.push({ data: JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null }), d });
  chunk({ role: "assistant", content: "", refusal: null });
  let toolIndex = 0;
  let reasoningTokens = 0;
  for (const b of script.blocks) {
    if (b.kind === "thinking") {
      reasoningTokens += approxTokens(b.text.length);
      for (const f of fragments(b.text, rng)) chunk({ reasoning_content: f });
    } else if (b.kind === "text") {
      for (const f of fragments(b.text, rng)) chunk({ content: f }, null, true);
    } else {
      const i = toolIndex++;
      chunk({ tool_calls: [{ index: i, id: idFrom("call_", b.idSeed, 24), type: "function", function: { name: b.name, arguments: "" } }] });
      for (const f of fragments(JSON.stringify(b.args), rng, 10)) chunk({ tool_calls: [{ index: i, function: { arguments: f } }] });
    }
  }
  const endAt = ev.length;
  chunk({}, script.stop === "tool" ? "tool_calls" : script.stop === "length" ? "length" : "stop");
  const u = usageFor(ctx);
  const out = approxTokens(outChars(script));
  ev.push({ data: JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: u.total, completion_tokens: out, total_tokens: u.total + out, prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } } }) });
  ev.push({ data: "[DONE]" });
  return { events: ev, endAt };
}
function completionsStreamError() {
  return { data: JSON.stringify({ error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: "server_error" } }) };
}

function encodeResponses(script, ctx, rng) {
  const ev = [];
  let seq = 0;
  const push = (obj, d) => { obj.sequence_number = seq++; ev.push({ event: obj.type, data: JSON.stringify(obj), d }); };
  const resp = (status, output, usage) => ({ id: ctx.ids.response, object: "response", created_at: 1750000000, status, background: false, error: null, incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null, instructions: null, max_output_tokens: null, model: ctx.model, output, parallel_tool_calls: true, previous_response_id: null, reasoning: { effort: null, summary: null }, store: false, temperature: 1, text: { format: { type: "text" } }, tool_choice: "auto", tools: [], top_p: 1, truncation: "disabled", usage, user: null, metadata: {} });
  push({ type: "response.created", response: resp("in_progress", [], null) });
  push({ type: "response.in_progress", response: resp("in_progress", [], null) });
  const output = [];
  let reasoningTokens = 0;
  script.blocks.forEach((b, oi) => {
    if (b.kind === "thinking") {
      const id = idFrom("rs_", `${ctx.ids.response}:rs:${oi}`, 40);
      reasoningTokens += approxTokens(b.text.length);
      push({ type: "response.output_item.added", output_index: oi, item: { id, type: "reasoning", summary: [] } });
      push({ type: "response.reasoning_summary_part.added", item_id: id, output_index: oi, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const f of fragments(b.text, rng)) push({ type: "response.reasoning_summary_text.delta", item_id: id, output_index: oi, summary_index: 0, delta: f });
      push({ type: "response.reasoning_summary_text.done", item_id: id, output_index: oi, summary_index: 0, text: b.text });
      push({ type: "response.reasoning_summary_part.done", item_id: id, output_index: oi, summary_index: 0, part: { type: "summary_text", text: b.text } });
      const item = { id, type: "reasoning", summary: [{ type: "summary_text", text: b.text }], encrypted_content: b.signature };
      push({ type: "response.output_item.done", output_index: oi, item });
      output.push(item);
    } else if (b.kind === "text") {
      const id = idFrom("msg_", `${ctx.ids.response}:msg:${oi}`, 40);
      push({ type: "response.output_item.added", output_index: oi, item: { id, type: "message", status: "in_progress", content: [], role: "assistant" } });
      push({ type: "response.content_part.added", item_id: id, output_index: oi, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } });
      for (const f of fragments(b.text, rng)) push({ type: "response.output_text.delta", item_id: id, output_index: oi, content_index: 0, delta: f, logprobs: [] }, true);
      push({ type: "response.output_text.done", item_id: id, output_index: oi, content_index: 0, text: b.text, logprobs: [] });
      const part = { type: "output_text", annotations: [], logprobs: [], text: b.text };
      push({ type: "response.content_part.done", item_id: id, output_index: oi, content_index: 0, part });
      const item = { id, type: "message", status: "completed", content: [part], role: "assistant" };
      push({ type: "response.output_item.done", output_index: oi, item });
      output.push(item);
    } else {
      const id = idFrom("fc_", `${b.idSeed}:fc`, 40);
      const callId = idFrom("call_", b.idSeed, 24);
      const args = JSON.stringify(b.args);
      push({ type: "response.output_item.added", output_index: oi, item: { id, type: "function_call", status: "in_progress", arguments: "", call_id: callId, name: b.name } });
      for (const f of fragments(args, rng, 10)) push({ type: "response.function_call_arguments.delta", item_id: id, output_index: oi, delta: f });
      push({ type: "response.function_call_arguments.done", item_id: id, output_index: oi, arguments: args });
      const item = { id, type: "function_call", status: "completed", arguments: args, call_id: callId, name: b.name };
      push({ type: "response.output_item.done", output_index: oi, item });
      output.push(item);
    }
  });
  const endAt = ev.length;
  const u = usageFor(ctx);
  const out = approxTokens(outChars(script));
  const status = script.stop === "length" ? "incomplete" : "completed";
  push({ type: status === "incomplete" ? "response.incomplete" : "response.completed", response: resp(status, output, { input_tokens: u.total, input_tokens_details: { cached_tokens: u.cacheRead }, output_tokens: out, output_tokens_details: { reasoning_tokens: reasoningTokens }, total_tokens: u.total + out }) });
  return { events: ev, endAt };
}
function responsesStreamError(seq) {
  return { event: "error", data: JSON.stringify({ type: "error", code: "server_error", message: "The server had an error processing your request. Sorry about that!", param: null, sequence_number: seq }) };
}

function encodeGoogle(script, ctx, rng) {
  // As Gemini: every chunk carries usageMetadata (prompt counts); the last content chunk also
  // carries finishReason and the final counts. Function calls arrive whole, without ids.
  const u = usageFor(ctx);
  const meta = (extra) => ({ promptTokenCount: u.total, ...(u.cacheRead ? { cachedContentTokenCount: u.cacheRead } : {}), ...extra });
  const chunks = [];
  const chunk = (parts, d) => chunks.push({ obj: { candidates: [{ content: { parts, role: "model" }, index: 0 }], usageMetadata: meta({ totalTokenCount: u.total }), modelVersion: ctx.model, responseId: ctx.ids.google }, d });
  let thoughts = 0;
  let sig = null;
  const hasTools = script.blocks.some((x) => x.kind === "tool");
  for (const b of script.blocks) {
    if (b.kind === "thinking") {
      thoughts += approxTokens(b.text.length);
      sig = b.signature;
      for (const f of fragments(b.text, rng, 12)) chunk([{ text: f, thought: true }]);
    } else if (b.kind === "text") {
      const fr = fragments(b.text, rng, 8);
      fr.forEach((f, i) => chunk([{ text: f, ...(sig && i === fr.length - 1 && !hasTools ? { thoughtSignature: sig } : {}) }], true));
    }
  }
  const toolParts = script.blocks.filter((b) => b.kind === "tool").map((b, i) => ({ functionCall: { name: b.name, args: b.args }, ...(i === 0 ? { thoughtSignature: b.signature } : {}) }));
  if (toolParts.length) chunk(toolParts);
  if (!chunks.length) chunk([{ text: "" }]);
  const endAt = chunks.length - 1; // truncation / errors cut before the finishing chunk
  const last = chunks[chunks.length - 1].obj;
  const out = approxTokens(outChars(script));
  last.candidates[0].finishReason = script.stop === "length" ? "MAX_TOKENS" : "STOP";
  last.usageMetadata = meta({ candidatesTokenCount: out, ...(thoughts ? { thoughtsTokenCount: thoughts } : {}), totalTokenCount: u.total + out + thoughts });
  return { events: chunks.map((c) => ({ data: JSON.stringify(c.obj), d: c.d })), endAt: Math.max(1, endAt) };
}
function googleStreamError() {
  return { data: JSON.stringify({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }) };
}

const ENCODERS = { "anthropic-messages": encodeAnthropic, "openai-completions": encodeCompletions, "openai-responses": encodeResponses, "google-generative-ai": encodeGoogle };

function serializeEvents(events, eol, comments) {
  let s = "";
  for (const e of events) {
    if (comments) s += `: keep-alive${eol}${eol}`;
    if (e.event) s += `event: ${e.event}${eol}`;
    s += `data: ${e.data}${eol}${eol}`;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Writing a stream split at awkward places
// ---------------------------------------------------------------------------------------------
function cutPoints(buf, rng, maxPieces) {
  if (maxPieces <= 1 || buf.length < 2) return { cuts: [], kinds: {} };
  const utf8 = [], crlf = [];
  for (let i = 1; i < buf.length; i++) {
    const c = buf[i];
    if ((c & 0xc0) === 0x80) utf8.push(i);
    else if (c === 0x0a && buf[i - 1] === 0x0d) crlf.push(i);
  }
  const pick = (arr, n) => {
    const out = [];
    for (let k = 0; k < n && arr.length; k++) out.push(arr.splice(Math.floor(rng() * arr.length), 1)[0]);
    return out;
  };
  const budget = maxPieces - 1;
  const set = new Map();
  for (const p of pick(utf8, Math.min(Math.ceil(budget / 3), 16))) set.set(p, "utf8");
  for (const p of pick(crlf, Math.min(Math.ceil(budget / 4), 12))) set.set(p, "crlf");
  let guard = 0;
  while (set.size < Math.min(budget, buf.length - 1) && guard++ < budget * 4) {
    const p = 1 + Math.floor(rng() * (buf.length - 1));
    if (!set.has(p)) set.set(p, "midline");
  }
  const cuts = [...set.keys()].sort((a, b) => a - b);
  const kinds = {};
  for (const k of set.values()) kinds[k] = (kinds[k] || 0) + 1;
  return { cuts, kinds };
}

// Writes buf in pieces, then calls done(). Stops early if the response closed.
function writeSplit(res, buf, rng, split, done) {
  let pieces;
  if (!split) pieces = [buf];
  else {
    const { cuts, kinds } = cutPoints(buf, rng, opts.maxPieces);
    pieces = [];
    let prev = 0;
    for (const c of cuts) { pieces.push(buf.subarray(prev, c)); prev = c; }
    pieces.push(buf.subarray(prev));
    stats.splits.pieces += pieces.length;
    for (const [k, n] of Object.entries(kinds)) stats.splits[k] += n;
  }
  let i = 0;
  const step = () => {
    if (res.destroyed || res.writableEnded) return;
    if (i >= pieces.length) return done();
    const p = pieces[i++];
    if (p.length) res.write(p);
    if (i >= pieces.length) return done();
    if (opts.pieceDelayMs > 0) setTimeout(step, opts.pieceDelayMs);
    else setImmediate(step);
  };
  step();
}

// ---------------------------------------------------------------------------------------------
// Slow streams (benchmark load): one shared body per (api, model), one global ticker
// ---------------------------------------------------------------------------------------------
const slowCache = new Map();
function slowBody(api, model, chunks, eol) {
  const key = `${api}\u0000${model}\u0000${chunks}\u0000${eol}`;
  let v = slowCache.get(key);
  if (v) return v;
  const words = ["héllo", "👋", "wörld", "—", "ünïcode", "✓", "naïve", "café"];
  const texts = [];
  for (let i = 0; i < chunks; i++) texts.push(`${words[i % words.length]}${i} `);
  const ctx = { model, bodyBytes: 400, convIndex: 0, ids: { message: idFrom("msg_01", "slow:" + key, 22), completion: idFrom("chatcmpl-", "slow:" + key, 29), response: idFrom("resp_", "slow:" + key, 40), google: idFrom("", "slow:" + key, 20) } };
  // One text block whose deltas are exactly `texts`.
  const script = { blocks: [{ kind: "text", text: texts.join("") }], stop: "stop" };
  fragmentsOverride = (text) => (text === script.blocks[0].text ? texts : [text]);
  let enc;
  try { enc = ENCODERS[api](script, ctx, () => 0); } finally { fragmentsOverride = null; }
  // Group events: the first group holds everything up to and including the first delta; every
  // following delta is its own group; the end events join the last delta's group.
  const groups = [];
  let cur = [];
  for (const e of enc.events) {
    cur.push(e);
    if (e.d) { groups.push(cur); cur = []; }
  }
  if (cur.length) {
    if (groups.length) groups[groups.length - 1].push(...cur); else groups.push(cur);
  }
  const parts = groups.map((g) => Buffer.from(serializeEvents(g, eol, false)));
  const offsets = [0];
  for (const p of parts) offsets.push(offsets[offsets.length - 1] + p.length);
  v = { buf: Buffer.concat(parts), offsets, groups: parts.length };
  slowCache.set(key, v);
  return v;
}

const slowStreams = new Set();
let slowTimer = null;
let slowTickMs = 5;
function slowTick() {
  const now = performance.now();
  for (const s of slowStreams) {
    if (s.res.destroyed) { slowStreams.delete(s); continue; }
    if (s.res.writableNeedDrain) continue;
    const due = Math.min(s.body.groups, 1 + Math.floor((now - s.start) / s.ms));
    if (due > s.sent) {
      stats.slow.writes++;
      if (due - s.sent > 1) {
        stats.slow.catchUpWrites++;
        if (due - s.sent > stats.slow.maxBehindGroups) stats.slow.maxBehindGroups = due - s.sent;
      }
      s.res.write(s.body.buf.subarray(s.body.offsets[s.sent], s.body.offsets[due]));
      s.sent = due;
      if (s.sent >= s.body.groups) { slowStreams.delete(s); s.res.end(); }
    }
  }
  if (slowStreams.size === 0) { clearInterval(slowTimer); slowTimer = null; }
}
function startSlow(res, body, ms, arrived) {
  const s = { res, body, ms, start: performance.now(), sent: 1 };
  stats.slow.streams++;
  const lag = s.start - arrived;
  if (lag > stats.slow.firstWriteMsMax) stats.slow.firstWriteMsMax = Math.round(lag * 10) / 10;
  res.write(body.buf.subarray(0, body.offsets[1]));
  if (body.groups <= 1) { res.end(); return; }
  slowStreams.add(s);
  if (slowStreams.size > stats.slow.maxActive) stats.slow.maxActive = slowStreams.size;
  const tick = Math.max(1, Math.min(5, Math.floor(ms / 4)));
  if (!slowTimer || tick < slowTickMs) {
    if (slowTimer) clearInterval(slowTimer);
    slowTickMs = tick;
    slowTimer = setInterval(slowTick, slowTickMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Request handling
// ---------------------------------------------------------------------------------------------
function route(method, pathname) {
  const p = pathname.replace(/\/{2,}/g, "/");
  if (method === "POST" && p === "/v1/chat/completions") return { api: "openai-completions" };
  if (method === "POST" && p === "/v1/responses") return { api: "openai-responses" };
  if (method === "POST" && p === "/v1/messages") return { api: "anthropic-messages" };
  const g = /^\/v1beta\/models\/(.+):(streamGenerateContent|generateContent)$/.exec(p);
  if (method === "POST" && g) return { api: "google-generative-ai", model: decodeURIComponent(g[1]).replace(/^models\//, ""), method: g[2] };
  return null;
}

function checkAuth(api, headers, query, behaviour) {
  const forced = behaviour?.base === "bad-key-always";
  if (api === "anthropic-messages") {
    const k = headers["x-api-key"];
    if (forced || k !== opts.key) return { status: 401, message: k ? "invalid x-api-key" : "x-api-key header is required" };
  } else if (api === "google-generative-ai") {
    const k = headers["x-goog-api-key"] ?? query.get("key");
    if (forced || k !== opts.key) {
      if (opts.googleRealAuth && !k) return { status: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", extra: { status: "PERMISSION_DENIED" } };
      return { status: opts.googleRealAuth ? 400 : 401, message: "API key not valid. Please pass a valid API key.", extra: { status: opts.googleRealAuth ? "INVALID_ARGUMENT" : "UNAUTHENTICATED", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }] } };
    }
  } else {
    const a = headers["authorization"];
    const m = a ? /^Bearer\s+(.*)$/i.exec(a) : null;
    if (forced || !m || m[1] !== opts.key) {
      if (!m) return { status: 401, message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.", extra: { type: "invalid_request_error", code: null } };
      const given = m[1];
      const masked = given.length > 8 ? `${given.slice(0, 3)}*********${given.slice(-4)}` : "****";
      return { status: 401, message: `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`, extra: { type: "invalid_request_error", code: "invalid_api_key" } };
    }
  }
  return null;
}

function conversationKey(api, model, ctx) {
  const firstUser = ctx.msgs.find((m) => m.role === "user")?.text ?? "";
  return crypto.createHash("sha256").update(`${api}\u0000${model}\u0000${ctx.system}\u0000${firstUser}`).digest("hex").slice(0, 16);
}

function sseHeaders(api, ids) {
  const h = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
  if (api === "anthropic-messages") h["request-id"] = ids.request;
  else if (api === "google-generative-ai") h["x-goog-fake"] = "1";
  else { h["x-request-id"] = ids.request; h["openai-processing-ms"] = "12"; }
  return h;
}

function failureResponse(api, res, base, args, ids, model) {
  const reqHdr = api === "anthropic-messages" ? { "request-id": ids.request } : api === "google-generative-ai" ? {} : { "x-request-id": ids.request };
  if (base === "rate-limit" || base === "rate-limit-ms") {
    const hdr = { ...reqHdr };
    if (base === "rate-limit") hdr["retry-after"] = String(args[0] ?? "1");
    else hdr["retry-after-ms"] = String(args[0] ?? "250");
    const msg = api === "anthropic-messages" ? "This request would exceed the rate limit for your organization (fake) of 5 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits."
      : api === "google-generative-ai" ? "Resource has been exhausted (e.g. check quota)."
      : `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more.`;
    sendJson(res, 429, errorBody(api, 429, msg, { type: api.startsWith("openai") ? "requests" : undefined, code: api.startsWith("openai") ? "rate_limit_exceeded" : undefined, requestId: ids.request }), hdr);
    return 429;
  }
  if (base === "overloaded") {
    if (api === "anthropic-messages") { sendJson(res, 529, errorBody(api, 529, "Overloaded", { requestId: ids.request }), reqHdr); return 529; }
    const msg = api === "google-generative-ai" ? "The model is overloaded. Please try again later." : "The engine is currently overloaded, please try again later.";
    sendJson(res, 503, errorBody(api, 503, msg, { type: "server_error", code: api.startsWith("openai") ? "server_error" : undefined }), reqHdr);
    return 503;
  }
  if (base === "error-500") {
    const msg = api === "anthropic-messages" ? "Internal server error" : api === "google-generative-ai" ? "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting" : "The server had an error while processing your request. Sorry about that!";
    sendJson(res, 500, errorBody(api, 500, msg, { requestId: ids.request }), reqHdr);
    return 500;
  }
  return 0;
}

function overflowResponse(api, res, ctx, ids) {
  const tokens = Math.max(213462, approxTokens(ctx.bodyBytes));
  let msg, extra = { requestId: ids.request };
  if (api === "anthropic-messages") msg = `prompt is too long: ${tokens} tokens > 200000 maximum`;
  else if (api === "openai-completions") { msg = `This model's maximum context length is 128000 tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`; extra = { param: "messages", code: "context_length_exceeded" }; }
  else if (api === "openai-responses") { msg = "Your input exceeds the context window of this model. Please adjust your input and try again."; extra = { param: "input", code: "context_length_exceeded" }; }
  else msg = `The input token count (${Math.max(tokens, 1048577)}) exceeds the maximum number of tokens allowed (1048576).`;
  sendJson(res, 400, errorBody(api, 400, msg, extra));
  return 400;
}

function handleApi(req, res, url, r, raw) {
  const api = r.api;
  const headers = req.headers;
  const entry = { seq: ++seqCounter, time: Date.now(), method: req.method, path: url.pathname, query: url.search, api, model: null, headers: redactHeaders(headers), body: null, bodyBytes: raw.length, status: 0, rule: null, behaviour: null, conversation: null };
  requestLog.push(entry);
  if (requestLog.length > opts.logMax) requestLog.splice(0, requestLog.length - opts.logMax);
  stats.requests++;
  bump(stats.byApi, api);
  const finish = (status) => { entry.status = status; bump(stats.byStatus, String(status)); };

  let body;
  try { body = JSON.parse(raw.toString("utf8")); } catch (e) {
    entry.rule = { rule: "json", message: `invalid JSON: ${e.message}` };
    bump(stats.rejected, `${api}:json`);
    const msg = api === "anthropic-messages" ? "There was an error parsing the body of your request" : api === "google-generative-ai" ? "Invalid JSON payload received." : "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";
    sendJson(res, 400, errorBody(api, 400, msg));
    return finish(400);
  }
  entry.body = body;
  const model = api === "google-generative-ai" ? r.model : body?.model;
  entry.model = model ?? null;
  const behaviour = parseModel(model ?? "");
  const query = url.searchParams;

  const auth = checkAuth(api, headers, query, behaviour);
  if (auth) {
    stats.unauthorized++;
    entry.rule = { rule: "auth", message: auth.message };
    sendJson(res, auth.status, errorBody(api, auth.status, auth.message, auth.extra || {}));
    return finish(auth.status);
  }
  if (!isObj(body)) {
    entry.rule = { rule: "json", message: "body is not a JSON object" };
    bump(stats.rejected, `${api}:json`);
    sendJson(res, 400, errorBody(api, 400, "The request body must be a JSON object."));
    return finish(400);
  }
  if (api === "google-generative-ai" && r.method !== "streamGenerateContent") {
    entry.rule = { rule: "alt_sse", message: "only streamGenerateContent is served" };
    bump(stats.rejected, `${api}:alt_sse`);
    sendJson(res, 400, errorBody(api, 400, "This fake endpoint serves only :streamGenerateContent?alt=sse."));
    return finish(400);
  }
  const v = api === "anthropic-messages" ? validateAnthropic(body, headers)
    : api === "openai-completions" ? validateCompletions(body)
    : api === "openai-responses" ? validateResponses(body)
    : validateGoogle(body, query);
  if (v) {
    entry.rule = { rule: v.rule, message: v.message };
    bump(stats.rejected, `${api}:${v.rule}`);
    log(`400 ${api}:${v.rule} ${v.message}`);
    sendJson(res, 400, errorBody(api, 400, v.message, { param: v.param ?? null, code: null }));
    return finish(400);
  }

  // Behaviour
  const ctx = normalize(api, body);
  ctx.model = model;
  ctx.bodyBytes = raw.length;
  const convKey = conversationKey(api, model, ctx);
  let conv = conversations.get(convKey);
  if (!conv) {
    if (conversations.size > 100000) conversations.clear();
    conv = { n: 0 };
    conversations.set(convKey, conv);
  }
  ctx.convIndex = conv.n++;
  entry.conversation = convKey;
  const idSeed = `${opts.seed}:${convKey}:${ctx.convIndex}`;
  const ids = {
    request: idFrom("req_", idSeed + ":req", 24),
    message: idFrom("msg_01", idSeed, 22),
    completion: idFrom("chatcmpl-", idSeed, 29),
    response: idFrom("resp_", idSeed, 40),
    google: idFrom("", idSeed + ":g", 20),
  };
  ctx.ids = ids;
  const rng = mulberry32(hash32(idSeed));
  let base = behaviour.base;
  if (FAILURES.has(base) && behaviour.once && ctx.convIndex > 0) base = "echo";
  entry.behaviour = base;

  const st = failureResponse(api, res, base, behaviour.args, ids, model);
  if (st) return finish(st);
  if (base === "overflow") {
    const limit = behaviour.args[0] !== undefined ? Number(behaviour.args[0]) : opts.overflowMessages;
    const tooMany = ctx.count > limit;
    const tooBig = opts.overflowBytes > 0 && raw.length > opts.overflowBytes;
    if (tooMany || tooBig) return finish(overflowResponse(api, res, ctx, ids));
    base = "echo";
  }

  const eol = behaviour.mods.has("crlf") ? "\r\n" : behaviour.mods.has("cr") ? "\r" : opts.crlf ? "\r\n" : "\n";

  if (base === "slow") {
    const chunks = Math.max(1, Math.min(100000, Number(behaviour.args[0] ?? 300) || 300));
    const ms = Math.max(1, Math.min(60000, Number(behaviour.args[1] ?? 20) || 20));
    const sb = slowBody(api, model, chunks, eol);
    res.writeHead(200, sseHeaders(api, ids));
    trackStream(res);
    startSlow(res, sb, ms, req.arrivedAt);
    return finish(200);
  }

  // Script
  let script;
  const toolsM = /^tools(?:-(\d+))?$/.exec(base);
  if (toolsM) script = toolsScript(ctx, Math.max(1, Math.min(50, Number(toolsM[1] ?? 1))), idSeed);
  else if (base === "thinking") {
    const lu = lastUserIndex(ctx);
    const ut = lu >= 0 ? ctx.msgs[lu].text.replace(/\s+/g, " ").trim().slice(0, 80) : "";
    script = { blocks: [{ kind: "thinking", text: `Thinking about «${ut}»… step 1: read it; step 2: answer 🤔`, signature: b64From(idSeed + ":sig", 48) }, { kind: "text", text: echoText(ctx) }], stop: "stop" };
  } else if (base === "length") script = { blocks: [{ kind: "text", text: echoText(ctx) }], stop: "length" };
  else script = { blocks: [{ kind: "text", text: echoText(ctx) }], stop: "stop" };
  for (const b of script.blocks) if (b.kind === "tool") b.signature = b64From(b.idSeed + ":ts", 32);

  const enc = ENCODERS[api](script, ctx, rng);
  let events = enc.events;
  let action = "end";
  if (base === "overloaded-stream") {
    const k = Math.max(1, Math.min(enc.endAt, Math.floor(enc.endAt / 2)));
    const err = api === "anthropic-messages" ? anthropicStreamError() : api === "openai-completions" ? completionsStreamError() : api === "openai-responses" ? responsesStreamError(k) : googleStreamError();
    events = [...events.slice(0, k), err];
  } else if (base === "truncated") {
    events = events.slice(0, Math.max(1, Math.floor(enc.endAt * 0.6)));
  } else if (base === "reset-mid-stream") {
    events = events.slice(0, Math.max(1, Math.floor(enc.endAt * 0.4)) + 1);
    action = "reset";
  } else if (base === "silent") {
    events = [];
    action = "silent";
  }
  let buf = Buffer.from(serializeEvents(events, eol, behaviour.mods.has("comments")));
  if (action === "reset" && events.length) {
    // keep the last event only half-written
    const lastLen = Buffer.byteLength(serializeEvents(events.slice(-1), eol, behaviour.mods.has("comments")));
    buf = buf.subarray(0, buf.length - Math.ceil(lastLen / 2));
  }
  res.writeHead(200, sseHeaders(api, ids));
  res.flushHeaders();
  trackStream(res);
  writeSplit(res, buf, rng, !behaviour.mods.has("nosplit"), () => {
    if (action === "end") res.end();
    else if (action === "reset") {
      res.serverAborted = true;
      stats.serverAborted++;
      const sock = res.socket;
      if (sock && typeof sock.resetAndDestroy === "function") sock.resetAndDestroy();
      else sock?.destroy();
    } else if (action === "silent") {
      const t = setTimeout(() => { if (!res.writableEnded) { res.serverAborted = true; stats.serverAborted++; res.socket?.destroy(); } }, opts.silentMs);
      res.on("close", () => clearTimeout(t));
    }
  });
  return finish(200);
}

function trackStream(res) {
  stats.streamsStarted++;
  activeStreams++;
  res.on("close", () => {
    activeStreams--;
    if (res.writableFinished) stats.streamsCompleted++;
    else if (!res.serverAborted) stats.clientClosedBeforeEnd++;
  });
}

function handle(req, res) {
  let url;
  try { url = new URL(req.url, "http://127.0.0.1"); } catch { res.writeHead(400); res.end(); return; }
  if (url.pathname === "/__requests" && req.method === "GET") {
    const since = Number(url.searchParams.get("since") || 0);
    return sendJson(res, 200, since ? requestLog.filter((e) => e.seq > since) : requestLog);
  }
  if (url.pathname === "/__stats" && req.method === "GET") {
    const ms = (ns) => Math.round(ns / 1e5) / 10;
    const eventLoopDelayMs = { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
    return sendJson(res, 200, { ...stats, eventLoopDelayMs, active: activeStreams, connections: { open: openConnections, total: totalConnections }, slowStreams: slowStreams.size, logged: requestLog.length });
  }
  if (url.pathname === "/__reset" && req.method === "POST") {
    requestLog = [];
    conversations = new Map();
    resetStats();
    req.resume();
    return sendJson(res, 200, { ok: true });
  }
  if (url.pathname === "/__health") return sendJson(res, 200, { ok: true });
  const r = route(req.method, url.pathname);
  if (!r) {
    req.resume();
    return sendJson(res, 404, { error: { message: `Unknown route ${req.method} ${url.pathname}`, type: "not_found", code: 404 } });
  }
  req.arrivedAt = performance.now();
  const chunks = [];
  let size = 0;
  let tooBig = false;
  req.on("data", (c) => {
    if (tooBig) return;
    size += c.length;
    if (size > opts.maxBodyBytes) { tooBig = true; chunks.length = 0; return; }
    chunks.push(c);
  });
  req.on("end", () => {
    if (tooBig) {
      stats.requests++;
      bump(stats.rejected, `${r.api}:request_too_large`);
      bump(stats.byStatus, "413");
      const msg = r.api === "anthropic-messages" ? "Request exceeds the maximum allowed number of bytes." : "Request too large.";
      return sendJson(res, 413, errorBody(r.api, 413, msg, { type: r.api === "anthropic-messages" ? "request_too_large" : undefined }));
    }
    try { handleApi(req, res, url, r, Buffer.concat(chunks)); }
    catch (e) {
      process.stderr.write(`fake_provider: internal error: ${e.stack}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake_provider internal error: ${e.message}` } });
      else res.destroy();
    }
  });
  req.on("error", () => {});
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------
const server = http.createServer({ keepAliveTimeout: 5000, headersTimeout: 60000, requestTimeout: 300000, noDelay: true, maxHeaderSize: 65536 }, handle);
server.maxConnections = 200000;
server.timeout = 0;
server.on("connection", (sock) => {
  openConnections++;
  totalConnections++;
  sock.on("close", () => openConnections--);
  sock.on("error", () => {});
});
server.on("clientError", (err, sock) => { if (sock.writable) sock.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n"); else sock.destroy(); });
server.listen({ host: "127.0.0.1", port: opts.port, backlog: 65535 }, () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
  log(`listening on 127.0.0.1:${server.address().port}`);
});
server.on("error", (e) => die(`listen failed: ${e.message}`));

let exiting = false;
function shutdown(why) {
  if (exiting) return;
  exiting = true;
  log(`exiting: ${why}`);
  try { server.close(); server.closeAllConnections?.(); } catch {}
  setTimeout(() => process.exit(0), 50).unref();
}
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => shutdown(sig));
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) shutdown("parent exited"); }, 1000).unref();
if (opts.lifetimeS > 0) setTimeout(() => shutdown("lifetime"), opts.lifetimeS * 1000).unref();
if (opts.stdin) {
  process.stdin.on("end", () => shutdown("stdin EOF"));
  process.stdin.on("error", () => shutdown("stdin error"));
  process.stdin.resume();
}
