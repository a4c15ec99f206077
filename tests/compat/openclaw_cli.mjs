// OpenClaw's own CLI (`openclaw gateway call`) against a running sessionrt gateway.
// Usage: node openclaw_cli.mjs NODE24 OPENCLAW_MJS PORT TOKEN HOME
// Each call is a separate `openclaw gateway call <method> --json` process, as a user runs it;
// the JSON it prints is asserted on. Exit 0 when every check passed, 1 otherwise (each failure
// printed with the call, its exit code and its output).
import { spawnSync } from 'node:child_process';

const [node24, cli, port, token, home] = process.argv.slice(2);
const url = `ws://127.0.0.1:${port}`;
let failures = 0;

function call(method, params) {
  const args = [cli, 'gateway', 'call', method, '--url', url, '--token', token, '--json'];
  if (params !== undefined) args.push('--params', JSON.stringify(params));
  const r = spawnSync(node24, args, { env: { PATH: process.env.PATH, HOME: home }, encoding: 'utf8', timeout: 60000 });
  let json = null;
  try { json = JSON.parse(r.stdout); } catch { /* reported below */ }
  return { method, params, code: r.status, json, stdout: r.stdout, stderr: r.stderr };
}

function check(what, ok, r) {
  if (ok) { console.log(`ok   ${what}`); return; }
  failures++;
  console.log(`FAIL ${what}`);
  if (r) console.log(`     call ${r.method} ${JSON.stringify(r.params ?? {})} -> exit ${r.code}\n     stdout: ${(r.stdout || '').slice(0, 2000)}\n     stderr: ${(r.stderr || '').slice(0, 2000)}`);
}

// A call that must succeed and print a JSON object.
function ok(method, params) {
  const r = call(method, params);
  check(`${method} exits 0 with a JSON object`, r.code === 0 && r.json && typeof r.json === 'object', r);
  return r;
}

const key = 'agent:main:main';

let r = ok('health');
check('health: ok is true and ts a number', r.json?.ok === true && typeof r.json?.ts === 'number', r);

r = ok('status');
check('status: an object with sessions', r.json && typeof r.json.sessions === 'object', r);

r = ok('sessions.list');
check('sessions.list: sessions is an array and count a number', Array.isArray(r.json?.sessions) && typeof r.json?.count === 'number', r);

r = ok('chat.send', { sessionKey: key, message: 'hello from openclaw', idempotencyKey: 'compat-run-1' });
check('chat.send: answers {runId: idempotencyKey, status: "started"}', r.json?.runId === 'compat-run-1' && r.json?.status === 'started', r);

// The run streams; chat.history shows the reply once it is stored (wait on that, bounded).
let history = null;
const deadline = Date.now() + 30000;
while (Date.now() < deadline) {
  history = call('chat.history', { sessionKey: key });
  const msgs = history.json?.messages;
  if (history.code === 0 && Array.isArray(msgs) && msgs.some(m => m.role === 'assistant')) break;
}
const msgs = history?.json?.messages ?? [];
const user = msgs.find(m => m.role === 'user');
const asst = msgs.find(m => m.role === 'assistant');
check('chat.history: the user message is there', user && (typeof user.content === 'string' ? user.content : JSON.stringify(user.content)).includes('hello from openclaw'), history);
check('chat.history: an assistant reply with text content', asst && Array.isArray(asst.content) && asst.content.some(c => c.type === 'text' && c.text.length > 0), history);
check('chat.history: sessionKey and sessionId', history?.json?.sessionKey === key && typeof history?.json?.sessionId === 'string', history);
const sessionIdBefore = history?.json?.sessionId;

// The same idempotencyKey again: the first run's id, and no second turn.
r = ok('chat.send', { sessionKey: key, message: 'hello from openclaw', idempotencyKey: 'compat-run-1' });
check('chat.send again with the same idempotencyKey: the same runId', r.json?.runId === 'compat-run-1', r);

r = ok('sessions.list');
const row = r.json?.sessions?.find(s => s.key === key);
check('sessions.list: the session is listed with its sessionId', row && row.sessionId === sessionIdBefore, r);

r = ok('sessions.patch', { key, label: 'compat label' });
check('sessions.patch: ok, entry.label set', r.json?.ok === true && r.json?.entry?.label === 'compat label', r);
r = ok('sessions.describe', { key });
check('sessions.describe: shows the label', r.json?.session?.label === 'compat label', r);
r = ok('sessions.patch', { key, label: null });
check('sessions.patch label:null clears it', r.json?.ok === true && r.json?.entry?.label === undefined, r);

r = ok('sessions.compact', { key });
check('sessions.compact: ok with a boolean compacted', r.json?.ok === true && typeof r.json?.compacted === 'boolean', r);

r = ok('sessions.reset', { key });
check('sessions.reset: ok, a new sessionId', r.json?.ok === true && typeof r.json?.entry?.sessionId === 'string' && r.json.entry.sessionId !== sessionIdBefore, r);

r = ok('sessions.delete', { key });
check('sessions.delete: ok, deleted', r.json?.ok === true && r.json?.deleted === true, r);
r = ok('sessions.list');
check('sessions.list after delete: the key is gone', Array.isArray(r.json?.sessions) && !r.json.sessions.some(s => s.key === key), r);

r = call('no.such.method');
check('an unknown method: exit 1 and "unknown method: no.such.method"', r.code === 1 && (r.stdout + r.stderr).includes('unknown method: no.such.method'), r);

r = call('sessions.patch', { nokey: 1 });
check('sessions.patch without key: exit 1 and an INVALID_REQUEST naming key', r.code === 1 && (r.stdout + r.stderr).includes('INVALID_REQUEST') && (r.stdout + r.stderr).includes('key'), r);

console.log(failures === 0 ? 'all checks passed' : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
