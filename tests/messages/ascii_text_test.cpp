// The shared text helpers that replaced the private copies (#35 item 4): ASCII case and
// blanks (ascii_text.hpp), JavaScript white space and trims (js_text.hpp), the one UTF-8 decoder
// and the one cut at a code point (utf8.hpp).
#include <catch2/catch.hpp>

#include <cctype>
#include <string>

#include "messages/ascii_text.hpp"
#include "messages/js_text.hpp"
#include "messages/utf8.hpp"

using namespace sessionrt;

TEST_CASE("ascii_lower folds A-Z only and keeps UTF-8 bytes") {
  CHECK(ascii_lower("MiXeD-Case_09") == "mixed-case_09");
  CHECK(ascii_lower("\xC3\x89T\xC3\x89") == "\xC3\x89t\xC3\x89");  // ÉTÉ: only the T folds
  CHECK(ascii_lower("") == "");
  // The same as std::tolower in the "C" locale for every byte (what the old copies used).
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    CHECK(ascii_lower_char(c) == static_cast<char>(std::tolower(b)));
  }
}

TEST_CASE("ascii_iequals and ascii_istarts_with ignore ASCII case only") {
  CHECK(ascii_iequals("Bearer", "bEARER"));
  CHECK_FALSE(ascii_iequals("Bearer", "Bearer "));
  CHECK_FALSE(ascii_iequals("\xC3\x89", "\xC3\xA9"));  // É and é differ: not JavaScript case
  CHECK(ascii_istarts_with("/RESET now", "/reset"));
  CHECK_FALSE(ascii_istarts_with("/re", "/reset"));
}

TEST_CASE("ascii_trim strips C isspace blanks or the given set") {
  CHECK(ascii_trim(" \t\n\v\f\rword \r\n") == "word");
  CHECK(ascii_trim(" \t \n") == "");
  CHECK(ascii_trim("") == "");
  CHECK(ascii_trim("\xC2\xA0x\xC2\xA0") == "\xC2\xA0x\xC2\xA0");  // NBSP is not ASCII: kept
  CHECK(ascii_trim_start("  a b  ") == "a b  ");
  CHECK(ascii_trim_end("  a b  ") == "  a b");
  CHECK(ascii_trim("\f x \v", " \t\r\n") == "\f x \v");  // a narrower set, as dock_command uses
  const std::string text = "  kept  ";
  CHECK(ascii_trim(text).data() == text.data() + 2);  // a view into the argument
}

TEST_CASE("utf8_prefix cuts back to a code point's start") {
  const std::string s = "ab\xE4\xB8\x8A" "cd";  // a b 上 c d
  CHECK(utf8_prefix(s, 99) == s);
  CHECK(utf8_prefix(s, s.size()) == s);
  CHECK(utf8_prefix(s, 2) == "ab");
  CHECK(utf8_prefix(s, 3) == "ab");  // inside 上: back to its lead byte
  CHECK(utf8_prefix(s, 4) == "ab");
  CHECK(utf8_prefix(s, 5) == "ab\xE4\xB8\x8A");
  CHECK(utf8_prefix("\x80\x80\x80", 2) == "");  // only continuation bytes: nothing is whole
  CHECK(utf8_prefix("\xFF\xFF\xFF", 2) == "\xFF\xFF");  // invalid leads are cut bytewise
}

TEST_CASE("decode_utf8_at rejects what RFC 3629 rejects") {
  CHECK(decode_utf8_at("A", 0).value == U'A');
  CHECK(decode_utf8_at("\xC3\xA9", 0).length == 2);
  CHECK(decode_utf8_at("\xF0\x9F\x98\x80", 0).value == 0x1F600);
  CHECK(decode_utf8_at("\xC0\xAF", 0).length == 0);          // overlong
  CHECK(decode_utf8_at("\xE0\x80\xAF", 0).length == 0);      // overlong
  CHECK(decode_utf8_at("\xED\xA0\x80", 0).length == 0);      // surrogate
  CHECK(decode_utf8_at("\xF4\x90\x80\x80", 0).length == 0);  // above U+10FFFF
  CHECK(decode_utf8_at("\xF5\x80\x80", 0).length == 0);      // no such lead byte
  CHECK(decode_utf8_at("\xE4\xB8", 0).length == 0);          // truncated
  CHECK(decode_utf8_at("\x80", 0).length == 0);              // stray continuation
  // is_valid_utf8 now runs on this decoder.
  CHECK(is_valid_utf8("a\xC3\xA9\xF0\x9F\x98\x80"));
  CHECK_FALSE(is_valid_utf8("a\xED\xA0\x80"));
}

TEST_CASE("ascii_is_blank is C isspace, ascii_trim_line strips a line as read") {
  for (int b = 0; b < 256; ++b) CHECK(ascii_is_blank(static_cast<char>(b)) == (std::isspace(b) != 0));
  CHECK(ascii_trim_line(" \ttoken \t\r\n") == "token");
  CHECK(ascii_trim_line("\r\ntoken") == "\r\ntoken");  // a line break at the start is kept
  CHECK(ascii_trim_line("\vtoken\v") == "\vtoken\v");
  CHECK(ascii_trim_line(" \r\n ") == "");
  CHECK(ascii_trimmed("\f Mixed \v") == "Mixed");
  CHECK(ascii_lower_trimmed("\f Mixed \v") == "mixed");
}

TEST_CASE("is_js_whitespace: ECMAScript's set, its Zs from ICU the same as the table it replaced") {
  // The hand-written table js_text used before it asked ICU for General_Category Zs.
  const auto table = [](char32_t cp) {
    const auto in = [cp](char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; };
    return in(0x09, 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 || in(0x2000, 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
  };
  std::size_t differ = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) differ += is_js_whitespace(cp) != table(cp);
  CHECK(differ == 0);
  CHECK_FALSE(is_js_whitespace(0x85));     // NEL: not JavaScript white space
  CHECK_FALSE(is_js_whitespace(0x200B));   // ZERO WIDTH SPACE is Cf, not Zs
  CHECK_FALSE(is_js_whitespace(0x110000));
}

TEST_CASE("js_trim_start and js_trim_end are trimStart and trimEnd, views into the argument") {
  const std::string s = "\xC2\xA0 x \xE3\x80\x80";  // NBSP, space, x, space, IDEOGRAPHIC SPACE
  CHECK(js_trim_start(s) == "x \xE3\x80\x80");
  CHECK(js_trim_end(s) == "\xC2\xA0 x");
  CHECK(js_trim(s) == "x");
  CHECK(js_trim_start(s).data() == s.data() + 3);
  CHECK(js_trim_end("\xE2\x80\xA8x\xE2\x80\xA9") == "\xE2\x80\xA8x");  // U+2028 / U+2029
  CHECK(js_trim_end("x\xFF ") == "x\xFF");        // an invalid byte is no white space
  CHECK(js_trim_end("x\x80\x80 ") == "x\x80\x80");
  CHECK(js_trim_start(" \xE3\x80") == "\xE3\x80");  // a cut sequence neither
  CHECK(js_trim_start(" \t\n") == "");
  CHECK(js_trim_end("") == "");
}
