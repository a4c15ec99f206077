// Writes json5_expected.json beside this script: for every case of the JSON5 project's test
// suite (json5-tests/, MIT, copied from github.com/json5/json5-tests), what the suite says the
// case must give, computed the way its README says: `.json` with JSON.parse, `.json5` with
// eval() (ES5 is the oracle, not a JSON5 library), `.js` / `.txt` must fail. Numbers JSON cannot
// write (NaN, Infinity, -Infinity, -0) are {"$number": "<text>"}. The oracle for
// messages/json5_reader (tests/messages/json5_reader_test.cpp). Run: node tests/vectors/gen_json5_expected.mjs
import { readdirSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "json5-tests");
const special = (_k, v) => {
  if (typeof v !== "number") return v;
  if (Number.isNaN(v)) return { $number: "NaN" };
  if (v === Infinity) return { $number: "Infinity" };
  if (v === -Infinity) return { $number: "-Infinity" };
  if (Object.is(v, -0)) return { $number: "-0" };
  return v;
};
const out = {};
for (const dir of readdirSync(root).sort()) {
  if (!statSync(join(root, dir)).isDirectory()) continue;
  for (const name of readdirSync(join(root, dir)).sort()) {
    const ext = name.slice(name.lastIndexOf(".") + 1);
    const file = `${dir}/${name}`;
    const text = readFileSync(join(root, file), "utf8");
    if (ext === "json") out[file] = { valid: true, value: JSON.parse(text, special) };
    else if (ext === "json5") out[file] = { valid: true, value: JSON.parse(JSON.stringify((0, eval)(`(${text}\n)`), special)) };
    else if (ext === "js" || ext === "txt") {
      const spec = name.replace(/\.(js|txt)$/, ".errorSpec");
      let error = null;
      try { error = (0, eval)(`(${readFileSync(join(root, dir, spec), "utf8")})`); } catch { /* no errorSpec */ }
      out[file] = { valid: false, ...(error ? { line: error.lineNumber, column: error.columnNumber } : {}) };
    }
  }
}
writeFileSync(join(here, "json5_expected.json"), JSON.stringify(out, null, 2) + "\n");
console.log(`${Object.keys(out).length} cases`);
