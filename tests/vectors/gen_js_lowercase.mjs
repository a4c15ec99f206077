// Writes js_lowercase.json beside this script: a JSON array of [input, input.toLowerCase()]
// pairs computed by this Node, the oracle for messages/js_text's js_lowercase.
// - every code point (BMP and astral) whose toLowerCase() differs from itself, one per pair;
// - strings whose result depends on context (final sigma) or expands (U+0130), and mixed text.
// Written as JSON.stringify(pairs, null, 2) like every vector (json_writer_test re-writes each
// byte for byte), so the text is raw UTF-8: never let a tool normalize it (NFC would turn
// U+212A KELVIN SIGN into "K"); regenerate instead. Run: node tests/vectors/gen_js_lowercase.mjs
// The Unicode version decides the sweep; it is printed, so a regenerated file can be explained.
import { writeFileSync } from "node:fs";

const pairs = [];
for (let c = 0; c <= 0x10ffff; ++c) {
  if (c >= 0xd800 && c <= 0xdfff) continue;  // lone surrogates are not text
  const s = String.fromCodePoint(c);
  if (s.toLowerCase() !== s) pairs.push(s);
}
const swept = pairs.length;

pairs.push(
  // Final sigma: U+03A3 becomes U+03C2 after a cased letter when no cased letter follows.
  "ΟΔΟΣ", "ΟΔΟΣ ΟΔΟΣ", "Σ", "ΑΣ.", "ΑΣΑ", "ΑΣ", "ΣΑ", "ΑΣ\u0301", "Α\u0301Σ", "ΑΣ'Α", "ΑΣ'", "ΑΣ1",
  "ΑΣ Σ", "ΣΣ", "ΑΣΣ", "ΟΔΟΣ-ΟΔΟΣ", "agent:main:ΟΔΟΣ", "aΣ", "aΣb", "ÄΣ", "1Σ",
  // Expanding and special mappings, and letters an old hand table missed.
  "İ", "İSTANBUL", "\u0130\u0130", "ǅ", "Ǆǅǆ", "Ⓐ", "ⒶⒷⒸ", "Ạ", "ẠẢẤ", "Ա", "ԱԲԳ", "ẞ", "\u2126", "\u212A", "\u212B",
  "ᾼ", "ᾈ", "Ϊ́", "Ⅻ", "Ꭰ", "𐐀", "𞤀", "𝐀",
  // Mixed text: ASCII with other scripts, emoji, CJK, combining marks.
  "Agent:MAIN", "Telegram:Group:ÉTÉ", "Hello WORLD ΟΔΟΣ Привет ÅNGSTRÖM", "MIXED ascii Ǆ 😀 漢字 A\u0308",
  "", "abc", "ABC-123_XYZ", "\u00C0\u00DE\u00D7\u00DF\u00FF\u0178",
);

const out = new URL("./js_lowercase.json", import.meta.url);
writeFileSync(out, JSON.stringify(pairs.map((s) => [s, s.toLowerCase()]), null, 2) + "\n");
console.log(`wrote ${pairs.length} pairs (${swept} code points) with Node ${process.versions.node}, ` +
            `ICU ${process.versions.icu}, Unicode ${process.versions.unicode}`);
