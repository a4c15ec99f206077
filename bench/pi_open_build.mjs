// Times pi's SessionManager.open(file).buildSessionContext() on the transcripts sessionrt's
// storage_bench wrote, so both implementations are measured on the very same files.
//   node pi_open_build.mjs <peer-bench home with node_modules> <reps> FILE...
// Prints one JSON line per file.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [home, repsArg, ...files] = process.argv.slice(2);
const { SessionManager } = await import(
  pathToFileURL(path.join(home, "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href);
const reps = Number(repsArg) || 5;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
for (const f of files) {
  const times = [];
  let msgs = 0;
  for (let r = 0; r < reps; r++) {
    if (globalThis.gc) globalThis.gc();
    const t0 = performance.now();
    const ctx = SessionManager.open(f, path.dirname(f)).buildSessionContext();
    times.push(performance.now() - t0);
    msgs = ctx.messages.length;
  }
  process.stdout.write(JSON.stringify({ bench: "pi_open_build_same_file", file: f, file_bytes: fs.statSync(f).size,
    open_build_ms_median: Math.round(median(times) * 1000) / 1000, ctx_messages: msgs, reps }) + "\n");
}
