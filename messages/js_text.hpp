// JavaScript string semantics over UTF-8 text, for rules that must match what OpenClaw's
// JavaScript does: code points, String.prototype.trim() and toLowerCase().
// - decode_utf8_at: the code point at a byte offset; length 0 means "not well-formed UTF-8
//   here" (overlongs, surrogates, truncated sequences), and such bytes are never whitespace;
// - js_trim removes ECMAScript WhiteSpace and LineTerminator code points from both ends;
// - js_lowercase maps Latin (incl. Latin-1 and Extended-A), Greek, Cyrillic and fullwidth Latin
//   as toLowerCase() does, U+0130 to "i" + U+0307; other scripts pass through unchanged, and
//   bytes that are not UTF-8 are kept as they are. Unicode lengths: utf8.hpp utf16_length.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace sessionrt {

struct code_point {
  char32_t value = 0;
  std::size_t length = 0;  // bytes; 0 when s[i] does not start a well-formed sequence
};

code_point decode_utf8_at(std::string_view s, std::size_t i);
void append_utf8(std::string& out, char32_t cp);
bool is_js_whitespace(char32_t cp);
std::string_view js_trim(std::string_view s);
std::string js_lowercase(std::string_view s);

}  // namespace sessionrt
