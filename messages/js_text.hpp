// JavaScript string semantics over UTF-8 text, for rules that must match what OpenClaw's
// JavaScript does: code points, String.prototype.trim() and toLowerCase().
// (Decoding and encoding UTF-8 live in utf8.hpp; ASCII-only case and blanks in ascii_text.hpp.)
// - bytes that are not well-formed UTF-8 are never whitespace;
// - is_js_whitespace is ECMAScript's WhiteSpace + LineTerminator: TAB VT FF SP, U+FEFF, every
//   Zs code point (ICU's General_Category, as V8 takes it from the Unicode tables), LF CR
//   U+2028 U+2029 (not U+0085);
// - js_trim removes them from both ends (String.prototype.trim), js_trim_start / js_trim_end
//   from one (trimStart / trimEnd); each returns a view into the argument; js_trimmed is
//   trim() as an owned string and js_lower_trimmed trim().toLowerCase(), the two forms the
//   session-key rules use; is_js_blank is trim() === "";
// - js_lowercase is toLowerCase(): ICU's full lowercase mapping in the root locale, as V8 does
//   it (U+0130 -> "i" + U+0307, a final capital sigma -> U+03C2); code points the linked ICU's
//   Unicode version does not know pass through unchanged. Bytes that are not well-formed UTF-8
//   are kept as they are and end a sigma's context, as the U+FFFD JavaScript would see there.
//   Text is at most INT32_MAX bytes (ICU's string length). Unicode lengths: utf8.hpp utf16_length.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "messages/utf8.hpp"

namespace sessionrt {

bool is_js_whitespace(char32_t cp);
std::string_view js_trim(std::string_view s);
std::string_view js_trim_start(std::string_view s);
std::string_view js_trim_end(std::string_view s);
std::string js_lowercase(std::string_view s);
std::string js_trimmed(std::string_view s);
std::string js_lower_trimmed(std::string_view s);
inline bool is_js_blank(std::string_view s) { return js_trim(s).empty(); }

}  // namespace sessionrt
