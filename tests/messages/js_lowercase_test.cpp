// js_lowercase against Node's String.prototype.toLowerCase(): every pair of
// tests/vectors/js_lowercase.json (written by gen_js_lowercase.mjs), plus the cases the vectors
// cannot hold: bytes that are not UTF-8, and the ASCII fast path.
// Node may carry a newer Unicode than the linked ICU: a code point the linked ICU does not know
// (unassigned there) must then pass through unchanged, and only single code points may differ.
#include <catch2/catch.hpp>
#include <unicode/uchar.h>

#include <string>

#include "messages/js_text.hpp"
#include "messages/json_reader.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

// Whether some code point of `s` (well-formed UTF-8) is unassigned in the linked ICU.
bool unknown_to_icu(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const code_point cp = decode_utf8_at(s, i);
    REQUIRE(cp.length != 0);
    if (u_charType(static_cast<UChar32>(cp.value)) == U_UNASSIGNED) return true;
    i += cp.length;
  }
  return false;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("js_lowercase equals Node's toLowerCase on every vector") {
  auto parsed = json::parse(testing::read_text(testing::vectors_dir() + "/js_lowercase.json"));
  REQUIRE(parsed.ok());
  const auto& pairs = parsed->as_array();
  REQUIRE(pairs.size() > 1400);  // the sweep alone has ~1,500 code points
  std::size_t checked = 0, newer_unicode = 0;
  for (const auto& pair : pairs) {
    const std::string in(pair.as_array().at(0).as_string());
    const std::string want(pair.as_array().at(1).as_string());
    INFO("input " << in << " (" << code_points(in) << " code points), Node gives " << want);
    if (unknown_to_icu(in)) {
      CHECK(code_points(in) == 1);
      CHECK(js_lowercase(in) == in);
      ++newer_unicode;
    } else {
      CHECK(js_lowercase(in) == want);
      ++checked;
    }
  }
  INFO("pairs checked " << checked << ", newer than ICU " << U_UNICODE_VERSION << ": " << newer_unicode);
  CHECK(checked > 1400);  // a skew that large means the wrong ICU is linked
}

TEST_CASE("js_lowercase maps final sigma, expansions and scripts beyond Latin, Greek, Cyrillic") {
  CHECK(js_lowercase("\u039f\u0394\u039f\u03a3") == "\u03bf\u03b4\u03bf\u03c2");  // ΟΔΟΣ -> οδος
  CHECK(js_lowercase("\u03a3") == "\u03c3");                                    // lone Σ -> σ
  CHECK(js_lowercase("\u0391\u03a3\u0391") == "\u03b1\u03c3\u03b1");            // medial Σ -> σ
  CHECK(js_lowercase("\u0130") == "i\u0307");                                   // İ -> i + U+0307
  CHECK(js_lowercase("\u01c5") == "\u01c6");                                    // ǅ -> ǆ
  CHECK(js_lowercase("\u24b6") == "\u24d0");                                    // Ⓐ -> ⓐ
  CHECK(js_lowercase("\u1ea0") == "\u1ea1");                                    // Ạ -> ạ
  CHECK(js_lowercase("\u0531") == "\u0561");                                    // Ա -> ա
  CHECK(js_lowercase("\U00010400") == "\U00010428");                            // Deseret, astral
}

TEST_CASE("js_lowercase keeps bytes that are not UTF-8, and they end a sigma's context") {
  // Node, given U+FFFD where the bad byte is: "ΑΣ\uFFFD" -> "ας\uFFFD", "Α\uFFFDΣ" -> "α\uFFFDσ".
  CHECK(js_lowercase("\u0391\u03a3\xff") == "\u03b1\u03c2\xff");
  CHECK(js_lowercase("\u0391\xff\u03a3") == "\u03b1\xff\u03c3");
  CHECK(js_lowercase("\xc0\xaf" "AB\xed\xa0\x80\u00c9") == "\xc0\xaf" "ab\xed\xa0\x80\u00e9");  // overlong, surrogate
  CHECK(js_lowercase("\u00c9\xe2\x82") == "\u00e9\xe2\x82");                                 // truncated at the end
  CHECK(js_lowercase(std::string_view("\u0391\0\u03a3", 5)) == std::string("\u03b1\0\u03c3", 5));  // NUL is text
}

TEST_CASE("js_lowercase lowers ASCII alone and leaves the rest of ASCII as it is") {
  CHECK(js_lowercase("Agent:MAIN:Telegram-42_@[]^`{}") == "agent:main:telegram-42_@[]^`{}");
  CHECK(js_lowercase("") == "");
}
