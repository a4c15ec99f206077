// OpenClaw's web Control UI (from the openclaw npm package) served by `sessionrt gateway`, driven
// in headless Chromium over the DevTools protocol (Node 24's WebSocket, no npm dependency).
// control_ui_browser.sh starts the fake provider and the gateway and seeds two sessions; this
// script then checks, with a screenshot per step in OUT:
//   1. login with the token (#token=...): the sidebar lists the seeded session, the main session
//      shows its history; "/do" in the composer: the command menu lists /dock-telegram (from
//      sessionrt's chat metadata, metadata.commands: the UI's own list has no dock commands);
//   2. a message typed in the composer gets a reply that grows (streamed pieces seen), then ends
//      with one user and one assistant message more (no duplicate) and no "Working…";
//   3. a second client (a plain gateway client) sends into the open session: the UI shows that
//      user message before the reply has finished, and the reply once;
//   4. Stop during a reply: the run ends, the full reply never shows, no "Working…" stays;
//   5. "+" (new session) then a first message: a new session exists, the UI is on it;
//   6. pin a session, reload: it is still pinned (the UI's Unpin control, and sessions.list);
//   8. the Sessions page: (a) the session "+" made, which has no label, is named by its first
//      message: sessions.list's derivedTitle (the sidebar's name for it) and displayName (the
//      title the table shows by a dashboard session's key); (b) each row's token figures and context meter are the
//      row's totalTokens / contextTokens from sessions.list; (c) "Fork conversation" in a
//      session's menu (sessions.create {parentSessionKey, fork:true}) makes a session holding the
//      parent's messages with the parent's message ids, and the UI opens it;
//   7. after at least 60 s of use, /metrics counts 0 "unknown method" refusals.
// Usage: node control_ui_browser.mjs BROWSER URL TOKEN OUT
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const [browser, base, token, out] = process.argv.slice(2);
const started = Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);
let b;
function fail(msg) {
  console.error(`FAILED: ${msg}`);
  if (b) fs.writeFileSync(path.join(out, "ws-frames.jsonl"), b.frames.map((f) => JSON.stringify(f)).join("\n") + "\n");
  if (b) b.close();
  process.exit(1);
}

// ---- Chromium over CDP --------------------------------------------------------------------
async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "control-ui-profile-"));
  const proc = spawn(browser, ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
    "--hide-scrollbars", "--no-first-run", "--disable-extensions", "--disable-background-networking",
    `--user-data-dir=${profile}`, "--window-size=1400,900", "about:blank"],
    // Its own process group: close() ends the browser with its zygote, GPU and renderer
    // processes, which a SIGTERM to the browser alone left running after the test.
    { stdio: ["ignore", "ignore", "ignore"], detached: true });
  let port;
  for (let i = 0; i < 300 && !port; i++) {
    await sleep(100);  // polling for the file Chromium writes once its DevTools port listens, bounded
    try { port = fs.readFileSync(`${profile}/DevToolsActivePort`, "utf8").split("\n")[0]; } catch {}
  }
  if (!port) throw new Error("Chromium wrote no DevToolsActivePort within 30 s");
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const ws = new WebSocket(targets.find((t) => t.type === "page").webSocketDebuggerUrl);
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  let id = 0;
  const pending = new Map();
  const frames = [];  // the UI's WebSocket frames, both ways
  const problems = [];  // exceptions and console errors
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.id) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      m.error ? p.rej(new Error(JSON.stringify(m.error))) : p.res(m.result);
      return;
    }
    if (m.method === "Network.webSocketFrameSent") frames.push({ dir: "sent", data: m.params.response.payloadData });
    else if (m.method === "Network.webSocketFrameReceived") frames.push({ dir: "recv", data: m.params.response.payloadData });
    else if (m.method === "Runtime.exceptionThrown") problems.push(`exception: ${m.params.exceptionDetails.text} ${m.params.exceptionDetails.exception?.description ?? ""}`);
  };
  const send = (method, params = {}) => new Promise((res, rej) => {
    const i = ++id;
    pending.set(i, { res, rej });
    ws.send(JSON.stringify({ id: i, method, params }));
  });
  await send("Network.enable");
  await send("Runtime.enable");
  await send("Page.enable");
  const close = () => {
    try { ws.close(); } catch {}
    try { process.kill(-proc.pid, "SIGKILL"); } catch {}
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { send, frames, problems, close };
}

const evaluate = async (expr) => {
  const r = await b.send("Runtime.evaluate", { expression: expr, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new Error(`evaluate ${expr}: ${JSON.stringify(r.exceptionDetails).slice(0, 300)}`);
  return r.result.value;
};
const bodyText = () => evaluate("document.body ? document.body.innerText : \"\"");
// How many times `text` shows on screen: text nodes inside laid-out elements larger than the 1 px
// boxes of screen-reader-only announcements (one repeats the latest reply for screen readers).
const shownCount = (text) => evaluate(`(() => {
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n = 0;
  for (let t = w.nextNode(); t; t = w.nextNode()) {
    if (!t.nodeValue.includes(${JSON.stringify(text)})) continue;
    const el = t.parentElement;
    const r = el.getBoundingClientRect();
    if (r.width > 2 && r.height > 2) ++n;
  }
  return n;
})()`);
async function shot(name) {
  const s = await b.send("Page.captureScreenshot", { format: "png" });
  fs.writeFileSync(path.join(out, name), Buffer.from(s.data, "base64"));
  log(`screenshot ${name}`);
}
// Polls `probe` (bounded) until it returns a truthy value.
async function until(what, probe, secs = 30, every = 100) {
  const deadline = Date.now() + secs * 1000;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) {
      await shot(`failed-${what.replace(/[^a-z0-9]+/gi, "-")}.png`).catch(() => {});
      fail(`${what} (waited ${secs} s)`);
    }
    await sleep(every);  // polling what the page shows, bounded
  }
}
const counts = () => evaluate(`({
  user: document.querySelectorAll('button[aria-label^="User message, marker"]').length,
  assistant: document.querySelectorAll('button[aria-label^="Assistant message, marker"]').length })`);
const working = async () => /Working…|Working\.\.\./.test(await bodyText());
async function type(text) {
  await evaluate(`(() => { const t = document.querySelector('textarea[aria-label="Chat composer"]'); t.focus(); return true; })()`);
  await b.send("Input.insertText", { text });
  await sleep(100);  // Lit renders the composer's value on its next frame
  for (const type of ["keyDown", "keyUp"])
    await b.send("Input.dispatchKeyEvent", { type, key: "Enter", code: "Enter", windowsVirtualKeyCode: 13 });
}
// Clicks the first element whose aria-label / title / text matches `re` (its source as a string).
const click = (re) => evaluate(`(() => {
  const re = ${re};
  const el = [...document.querySelectorAll('button, [role="button"], a')].find((e) =>
    re.test(e.getAttribute('aria-label') || '') || re.test(e.title || '') || re.test((e.innerText || '').trim()));
  if (!el) return false;
  el.click();
  return el.getAttribute('aria-label') || el.title || el.innerText.trim();
})()`);

// ---- A second client: the gateway protocol without a browser --------------------------------
async function gatewayClient() {
  const ws = new WebSocket(base.replace(/^http/, "ws"));
  const pending = new Map();
  let n = 0;
  ws.onmessage = (ev) => {
    const f = JSON.parse(ev.data);
    if (f.type !== "res") return;
    const p = pending.get(f.id);
    if (!p) return;
    pending.delete(f.id);
    f.ok ? p.res(f.payload) : p.rej(new Error(`${f.error?.code}: ${f.error?.message}`));
  };
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = rej; });
  const request = (method, params = {}) => new Promise((res, rej) => {
    const id = `r${++n}`;
    pending.set(id, { res, rej });
    ws.send(JSON.stringify({ type: "req", id, method, params }));
  });
  await request("connect", { minProtocol: 4, maxProtocol: 4, client: { id: "cli", version: "1.0.0", platform: "linux", mode: "cli" },
    role: "operator", scopes: ["operator.admin", "operator.read", "operator.write"], auth: { token } });
  return { request, close: () => ws.close() };
}

const ECHO_END = "ünïcode ✓";  // the fake provider's echo reply ends so
const echoOf = (text) => `Echo: ${text}`;

// ---- 1. login, sidebar, main history ---------------------------------------------------------
b = await launch();
await b.send("Page.navigate", { url: `${base}/#token=${encodeURIComponent(token)}` });
await until("the UI connects", async () => /Connected/.test(await bodyText()), 60);
await until("the sidebar lists the seeded session 'Seeded other'", async () => (await bodyText()).includes("Seeded other"));
await until("the main session shows its history", async () => (await bodyText()).includes(echoOf("seed main hello")));
await shot("01-login-main-history.png");
log("1. logged in; sidebar lists sessions; main history shown");

// ---- 1b. the command menu lists sessionrt's commands (chat metadata's `commands`) ---------------
await evaluate(`(() => { const t = document.querySelector('textarea[aria-label="Chat composer"]'); t.focus(); return true; })()`);
await b.send("Input.insertText", { text: "/do" });
await until("the command menu offers /dock-telegram with sessionrt's description", async () => {
  const t = await bodyText();
  return t.includes("/dock-telegram") && t.includes("Move this direct session's replies to telegram.");
}, 15);
await shot("01b-command-menu.png");
await b.send("Input.dispatchKeyEvent", { type: "keyDown", key: "Escape", code: "Escape", windowsVirtualKeyCode: 27 });
await b.send("Input.dispatchKeyEvent", { type: "keyUp", key: "Escape", code: "Escape", windowsVirtualKeyCode: 27 });
for (let i = 0; i < 3; ++i)
  for (const type of ["keyDown", "keyUp"])
    await b.send("Input.dispatchKeyEvent", { type, key: "Backspace", code: "Backspace", windowsVirtualKeyCode: 8 });
await until("the composer is empty again", () => evaluate(`document.querySelector('textarea[aria-label="Chat composer"]').value === ""`), 10);
log("1b. the command menu lists /dock-telegram, a command only sessionrt's metadata.commands names");

// ---- 2. send, the reply grows, then ends once ----------------------------------------------
const before = await counts();
const m1 = `browser ${Date.now()}`;
await type(m1);
const partials = new Set();
await until("the streamed reply to the typed message completes", async () => {
  const t = await bodyText();
  const at = t.indexOf(echoOf(m1));
  if (at < 0) return false;
  const tail = t.slice(at, at + 200);
  if (tail.includes(ECHO_END)) return true;
  partials.add(tail.split("\n")[0].length);
  return false;
}, 60, 50);
if (partials.size < 2) fail(`the reply did not grow on screen (partial lengths seen: ${[...partials].join(", ")})`);
await until("no 'Working…' after the reply", async () => !(await working()), 15);
await sleep(1500);  // a late duplicate (history reload after the final) would land in this window
let after = await counts();
if (after.user !== before.user + 1 || after.assistant !== before.assistant + 1)
  fail(`after one exchange: ${JSON.stringify(before)} -> ${JSON.stringify(after)} (want +1 user, +1 assistant)`);
if ((await shownCount(echoOf(m1))) !== 1) fail(`the reply shows ${await shownCount(echoOf(m1))} times`);
if (await working()) fail("'Working…' came back after the reply");
await shot("02-sent-reply-complete.png");
log(`2. typed message answered: reply grew through ${partials.size} partial lengths, one user + one assistant message, no Working…`);

// ---- 3. a second client sends into the open session ------------------------------------------
const other = await gatewayClient();
const m2 = `second client ${Date.now()}`;
const c2 = await counts();
await other.request("chat.send", { sessionKey: "agent:main:main", message: m2, idempotencyKey: `second-${Date.now()}` });
const sentAt = Date.now();
await until("the second client's user message shows", async () => {
  const t = await bodyText();
  return t.split(m2).length - 1 >= 1;
}, 20, 50);
const userShownMs = Date.now() - sentAt;
const replyDoneEarly = (await bodyText()).includes(`${echoOf(m2)}`) && (await bodyText()).includes(ECHO_END);
await until("the second client's reply completes in the UI", async () => {
  const t = await bodyText();
  const at = t.indexOf(echoOf(m2));
  return at >= 0 && t.slice(at, at + 200).includes(ECHO_END);
}, 60, 50);
await until("no 'Working…' after the second client's run", async () => !(await working()), 15);
await sleep(1500);  // room for a duplicate to appear
after = await counts();
if (after.user !== c2.user + 1 || after.assistant !== c2.assistant + 1)
  fail(`after the second client's exchange: ${JSON.stringify(c2)} -> ${JSON.stringify(after)} (want +1 user, +1 assistant)`);
if ((await shownCount(echoOf(m2))) !== 1) {
  fs.writeFileSync(path.join(out, "failed-body.txt"), await bodyText());
  await shot("failed-second-client.png");
  fail("the second client's reply shows more than once");
}
await shot("03-second-client.png");
log(`3. second client's message shown after ${userShownMs} ms${replyDoneEarly ? " (with its reply already complete)" : ", before its reply ended"}; reply shown once`);
if (replyDoneEarly) fail("the second client's user message showed only once its reply had completed");

// ---- 4. Stop a slow reply --------------------------------------------------------------------
const m3 = `stop me ${Date.now()}`;
await type(m3);
await until("the reply to be stopped starts streaming", async () => (await bodyText()).includes(echoOf(m3)), 30, 50);
const stopped = await until("a Stop control", () => click("/^stop( generating| run|)$/i"), 10, 50);
log(`clicked ${JSON.stringify(stopped)}`);
await until("no 'Working…' after Stop", async () => !(await working()), 20);
await sleep(2000);  // the reply must not complete after the stop
{
  const t = await bodyText();
  const at = t.indexOf(echoOf(m3));
  if (at >= 0 && t.slice(at, at + 200).includes(ECHO_END)) fail("the stopped reply still completed");
}
await shot("04-stopped.png");
log("4. Stop ended the run before its reply completed");

// ---- 5. a new session from "+" -----------------------------------------------------------------
const listed = async () => (await other.request("sessions.list", { limit: 200 })).sessions;
const keysBefore = new Set((await listed()).map((s) => s.key));
const plus = await click("/^new (session|chat|conversation)$/i");
if (!plus) fail("no New session control");
log(`clicked ${JSON.stringify(plus)}`);
await sleep(500);  // the new chat view renders
const m4 = `first words ${Date.now()}`;
await type(m4);
const created = await until("a new session in sessions.list", async () => (await listed()).find((s) => !keysBefore.has(s.key)), 30);
await until("the new session's reply in the UI", async () => {
  const t = await bodyText();
  const at = t.indexOf(echoOf(m4));
  return at >= 0 && t.slice(at, at + 200).includes(ECHO_END);
}, 60);
await shot("05-new-session.png");
log(`5. "+" then a first message made ${created.key}`);

// ---- 6. pin a session, reload ------------------------------------------------------------------
const pinned = await click("/^pin session/i");
if (!pinned) fail("no Pin session control");
const pinnedRow = await until("sessions.list shows a pinned session", async () => (await listed()).find((s) => s.pinned === true), 15);
await b.send("Page.reload", { ignoreCache: false });
await until("the UI connects after the reload", async () => /Connected/.test(await bodyText()), 60);
await until("the pin survives the reload (an Unpin control)", () =>
  evaluate(`!![...document.querySelectorAll('button')].find((e) => /^unpin/i.test(e.getAttribute('aria-label') || e.title || ''))`), 30);
await shot("06-pinned-after-reload.png");
log(`6. pinned ${pinnedRow.key}; still pinned after the reload`);

// ---- 8. the Sessions page: derived titles, context figures, fork -------------------------------
const listParams = { includeGlobal: true, includeUnknown: true, limit: 200, includeDerivedTitles: true };
const rowsByKey = async () => new Map((await other.request("sessions.list", listParams)).sessions.map((s) => [s.key, s]));
await b.send("Page.navigate", { url: `${base}/sessions#token=${encodeURIComponent(token)}` });
await until("the UI connects on the Sessions page", async () => /Connected/.test(await bodyText()), 60);
// One row of the page's table by session key: its text and its context meter.
const pageRow = (key) => evaluate(`(() => {
  const tr = [...document.querySelectorAll('tr.session-data-row')].find((r) =>
    [...r.querySelectorAll('a.session-link')].some((a) => a.textContent.trim() === ${JSON.stringify(key)}) ||
    r.querySelector('input[aria-label="Select session: ${key}"]'));
  if (!tr) return null;
  const meter = tr.querySelector('.session-context-meter');
  const fill = tr.querySelector('.session-context-meter__fill');
  return { text: tr.innerText, meter: meter ? meter.getAttribute('aria-label') : null,
           value: tr.querySelector('.session-tokens__value')?.textContent.trim() ?? null, fill: fill ? fill.style.width : null };
})()`);
await until("the Sessions page lists the sessions", async () => (await pageRow("agent:main:main")) && (await pageRow(created.key)), 30);
const rows = await rowsByKey();
// (a) the session "+" made has no label: sessionrt derives its title from its first message
// (derivedTitle, which the sidebar shows) and, for a dashboard session, keeps it as its
// displayName (OpenClaw names one by a model call), which the Sessions table shows by its key.
const madeRow = rows.get(created.key);
if (madeRow?.derivedTitle !== m4 || madeRow?.displayName !== m4)
  fail(`sessions.list ${created.key}: derivedTitle ${JSON.stringify(madeRow?.derivedTitle)}, displayName ${JSON.stringify(madeRow?.displayName)}, want ${JSON.stringify(m4)}`);
await until(`the Sessions table shows the title ${JSON.stringify(m4)}`, () => evaluate(`(() => {
  const tr = [...document.querySelectorAll('tr.session-data-row')].find((r) => r.querySelector('input[aria-label="Select session: ${created.key}"]'));
  return tr?.querySelector('.session-key-display-name')?.textContent.trim() === ${JSON.stringify(m4)};
})()`), 15);
await until(`the sidebar names the session ${JSON.stringify(m4)}`, () => evaluate(`[...document.querySelectorAll('nav a, aside a, [class*="sidebar"] a, [class*="sidebar"] button')].some((e) => (e.innerText || '').includes(${JSON.stringify(m4)}) || (e.title || '').includes(${JSON.stringify(m4)}))`), 15);
// (b) token figures and the context meter from sessionrt's totalTokens / contextTokens.
const fmt = (n) => n.toLocaleString("en-US");
for (const key of ["agent:main:main", "agent:main:other", created.key]) {
  const r = rows.get(key);
  if (!(r?.contextTokens > 0) || !(r.totalTokens > 0)) fail(`sessions.list row ${key}: totalTokens ${r?.totalTokens}, contextTokens ${r?.contextTokens}`);
  const want = `(${fmt(r.totalTokens)} / ${fmt(r.contextTokens)} tokens)`;
  const shown = await until(`the context meter of ${key} shows ${want}`, async () => {
    const p = await pageRow(key);
    return p?.meter?.includes(want) ? p : null;
  }, 15);
  const pct = Number(shown.meter.match(/^(\d+)% of context used/)?.[1]);
  const expectPct = Math.round((r.totalTokens / r.contextTokens) * 100);
  if (Math.abs(pct - expectPct) > 1 || shown.fill !== `${pct}%`) fail(`the meter of ${key}: ${shown.meter}, fill ${shown.fill} (want about ${expectPct}%)`);
  log(`   ${key}: "${shown.value}", meter "${shown.meter}"`);
}
await shot("08-sessions-page.png");
log(`8a. the Sessions table and the sidebar name the "+" session by its derived title ${JSON.stringify(m4)}`);
log("8b. token figures and context meters are sessionrt's totalTokens / contextTokens");
// (c) "Fork conversation" from the main session's menu: sessions.create {parentSessionKey, fork}.
const keysBeforeFork = new Set(rows.keys());
const opened = await evaluate(`(() => {
  const tr = [...document.querySelectorAll('tr.session-data-row')].find((r) => r.querySelector('input[aria-label="Select session: agent:main:main"]'));
  const menu = tr && tr.querySelector('button[aria-label="Open session menu"]');
  if (!menu) return false;
  menu.click();
  return true;
})()`);
if (!opened) fail("no session menu on the main session's row");
await until("the Fork conversation menu item", () => evaluate(`(() => {
  const item = [...document.querySelectorAll('[role="menuitem"]')].find((e) => /^fork conversation/i.test(e.innerText.trim()));
  if (!item) return false;
  item.click();
  return true;
})()`), 10, 100);
const forked = await until("a forked session in sessions.list", async () => [...(await rowsByKey()).values()].find((s) => !keysBeforeFork.has(s.key)), 30);
const parentPage = await other.request("chat.history", { sessionKey: "agent:main:main" });
const forkPage = await other.request("chat.history", { sessionKey: forked.key });
const ids = (p) => p.messages.map((m) => m.__openclaw?.id).join(",");
if (!forkPage.messages.length || ids(forkPage) !== ids(parentPage))
  fail(`the fork ${forked.key} holds ${forkPage.messages.length} messages (ids ${ids(forkPage).slice(0, 80)}), the parent ${parentPage.messages.length}`);
await until("the UI opens the forked session with the parent's history", async () => {
  const href = await evaluate("location.pathname");
  return /^\/chat\//.test(href) && (await bodyText()).includes(echoOf("seed main hello"));
}, 30);
await shot("09-forked-session.png");
log(`8c. "Fork conversation" made ${forked.key} (${forkPage.messages.length} messages with the parent's ids); the UI opened it`);

// ---- 7. a minute of use: no unknown method -----------------------------------------------------
const rest = 60000 - (Date.now() - started);
if (rest > 0) await sleep(rest);  // the UI keeps polling (question.list, agent.identity.get, ...) meanwhile
const metrics = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).text();
const unknown = Number((metrics.match(/sessionrt_gateway_refused_total\{reason="unknown_method"\} (\d+)/) ?? [])[1]);
const refusals = b.frames.filter((f) => f.dir === "recv" && /"ok":false/.test(f.data)).map((f) => f.data.slice(0, 200));
fs.writeFileSync(path.join(out, "ws-frames.jsonl"), b.frames.map((f) => JSON.stringify(f)).join("\n") + "\n");
await shot("07-after-a-minute.png");
log(`7. ${((Date.now() - started) / 1000).toFixed(0)} s of use: unknown_method refusals ${unknown}; ${b.frames.length} frames; refused answers: ${refusals.length}`);
for (const r of refusals) log(`   refused: ${r}`);
if (b.problems.length) log(`page exceptions: ${b.problems.join(" | ")}`);
if (!(unknown === 0)) fail(`${unknown} unknown-method refusals in a minute of use`);
other.close();
b.close();
console.log("control UI in Chromium: login, sessions, history, streamed reply, second client, Stop, new session, pin, Sessions page (titles, context meters, fork): ok");
process.exit(0);
