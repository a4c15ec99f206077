#include "messages/ascii_text.hpp"

namespace sessionrt {

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower_char(c);
  return out;
}

bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower_char(a[i]) != ascii_lower_char(b[i])) return false;
  return true;
}

bool ascii_istarts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.size() >= prefix.size() && ascii_iequals(s.substr(0, prefix.size()), prefix);
}

std::string_view ascii_trim_start(std::string_view s, std::string_view blanks) noexcept {
  const auto first = s.find_first_not_of(blanks);
  return first == std::string_view::npos ? std::string_view() : s.substr(first);
}

std::string_view ascii_trim_end(std::string_view s, std::string_view blanks) noexcept {
  const auto last = s.find_last_not_of(blanks);
  return last == std::string_view::npos ? std::string_view() : s.substr(0, last + 1);
}

std::string_view ascii_trim(std::string_view s, std::string_view blanks) noexcept {
  return ascii_trim_end(ascii_trim_start(s, blanks), blanks);
}

std::string_view ascii_trim_line(std::string_view s) noexcept { return ascii_trim_end(ascii_trim_start(s, " \t"), " \t\r\n"); }

std::string ascii_trimmed(std::string_view s) { return std::string(ascii_trim(s)); }

std::string ascii_lower_trimmed(std::string_view s) { return ascii_lower(ascii_trim(s)); }

}  // namespace sessionrt
