// UTF-8 checks for text that is about to be written: invalid UTF-8 is never written raw
// (SPEC §9). Also the JavaScript length of a string (UTF-16 code units), which the token
// estimator and limits that mirror JS code count in. The one UTF-8 decoder of the code base
// (decode_utf8_at) and the one "cut at a code point boundary" (utf8_prefix) live here.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace sessionrt {

struct code_point {
  char32_t value = 0;
  std::size_t length = 0;  // bytes; 0 when s[i] does not start a well-formed sequence
};

// The code point at byte offset i (< s.size()); length 0 means "not well-formed UTF-8 here"
// (overlongs, surrogates, above U+10FFFF, truncated sequences, stray continuation bytes).
code_point decode_utf8_at(std::string_view s, std::size_t i);
void append_utf8(std::string& out, char32_t cp);
// The longest prefix of `s` of at most max_bytes that does not end inside a multi-byte
// sequence: `s` itself when it fits, else cut back to the start of the code point at
// max_bytes. Only continuation bytes are stepped over, so invalid text is cut bytewise.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept;

bool is_valid_utf8(std::string_view s) noexcept;
// Copy of `s` with every invalid sequence replaced by U+FFFD; *replaced counts them.
std::string to_valid_utf8(std::string_view s, std::size_t* replaced = nullptr);
// String.prototype.length of the text (a 4-byte sequence counts 2). `s` should be valid.
std::size_t utf16_length(std::string_view s) noexcept;

}  // namespace sessionrt
