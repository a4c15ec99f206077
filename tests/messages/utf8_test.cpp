// UTF-8 helpers: validity, WHATWG replacement, and the JavaScript length (UTF-16 units),
// whose word-at-a-time counting is checked against the one-byte-at-a-time definition.
#include <catch2/catch.hpp>

#include <random>

#include "messages/js_text.hpp"
#include "messages/utf8.hpp"

using namespace sessionrt;

namespace {
std::size_t utf16_length_bytewise(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += ((c & 0xC0) != 0x80) + (c >= 0xF0);
  return n;
}
}  // namespace

TEST_CASE("utf16_length counts JavaScript string length") {
  CHECK(utf16_length("") == 0);
  CHECK(utf16_length("abc") == 3);
  CHECK(utf16_length("\xc3\xa9") == 1);              // é
  CHECK(utf16_length("\xe4\xb8\x8a") == 1);          // 上
  CHECK(utf16_length("\xf0\x9f\x98\x80") == 2);      // 😀 is a surrogate pair in JS
  CHECK(utf16_length("a\xf0\x9f\x98\x80" "bcdefgh\xc3\xa9xyz") == 1 + 2 + 7 + 1 + 3);
  std::mt19937 rng(7);
  const char* pieces[] = {"a", "Z", " ", "\xc3\xa9", "\xe4\xb8\x8a", "\xf0\x9f\x98\x80", "\x80", "\xff"};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) s += pieces[rng() % 8];
    INFO(s.size());
    CHECK(utf16_length(s) == utf16_length_bytewise(s));
  }
}

TEST_CASE("invalid UTF-8 is detected and each maximal bad subpart becomes one U+FFFD") {
  CHECK(is_valid_utf8("plain ascii and \xc3\xa9"));
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));        // overlong
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));    // surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  std::size_t n = 0;
  // WHATWG: "\xe4\xb8" (truncated 3-byte sequence) is one maximal subpart -> one U+FFFD
  CHECK(to_valid_utf8("a\xe4\xb8z\xff", &n) == "a\xef\xbf\xbdz\xef\xbf\xbd");
  CHECK(n == 2);
}

TEST_CASE("js_trim and js_lowercase follow String.prototype.trim and toLowerCase") {
  CHECK(js_trim("  \t hello \n") == "hello");
  CHECK(js_trim("\xc2\xa0 x \xe3\x80\x80") == "x");  // NBSP and ideographic space are whitespace
  CHECK(js_trim("\xe4\xb8\x8a") == "\xe4\xb8\x8a");
  CHECK(js_trim("   ") == "");
  CHECK(js_lowercase("Agent:MAIN") == "agent:main");
  CHECK(js_lowercase("\xc3\x89T\xc3\x89") == "\xc3\xa9t\xc3\xa9");  // ÉTÉ -> été
  CHECK(js_lowercase("\xc4\xb0") == "i\xcc\x87");                   // İ -> i + combining dot
}
