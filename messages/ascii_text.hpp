// ASCII-only case folding and blank trimming, for protocol tokens, header names, config
// keywords and other text whose rules are byte rules (not JavaScript's: for
// String.prototype.toLowerCase() / trim() use js_lowercase / js_trim in js_text.hpp).
// - ascii_lower maps 'A'..'Z' to 'a'..'z' and keeps every other byte, UTF-8 included; it is
//   what std::tolower does in the "C" locale, which this program never leaves;
// - ascii_trim* strip the bytes in `blanks` (by default C isspace: space \t \n \v \f \r) and
//   return a view into the argument; ascii_trimmed / ascii_lower_trimmed are owned copies;
// - ascii_trim_line strips a line as read, its line break included: SP and HT at the start,
//   SP HT CR LF at the end (an HTTP header's continuation, a one-line token file).
#pragma once
#include <string>
#include <string_view>

namespace sessionrt {

inline constexpr std::string_view ascii_blanks = " \t\n\v\f\r";

constexpr bool ascii_is_blank(char c) noexcept { return ascii_blanks.find(c) != std::string_view::npos; }
constexpr char ascii_lower_char(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
std::string ascii_lower(std::string_view s);
// Equal / prefix ignoring ASCII case.
bool ascii_iequals(std::string_view a, std::string_view b) noexcept;
bool ascii_istarts_with(std::string_view s, std::string_view prefix) noexcept;

std::string_view ascii_trim_start(std::string_view s, std::string_view blanks = ascii_blanks) noexcept;
std::string_view ascii_trim_end(std::string_view s, std::string_view blanks = ascii_blanks) noexcept;
std::string_view ascii_trim(std::string_view s, std::string_view blanks = ascii_blanks) noexcept;
std::string_view ascii_trim_line(std::string_view s) noexcept;
std::string ascii_trimmed(std::string_view s);
std::string ascii_lower_trimmed(std::string_view s);

}  // namespace sessionrt
