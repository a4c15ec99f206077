#include "messages/base64_rule.hpp"

namespace sessionrt {

bool is_base64_alphabet_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

bool is_valid_base64(std::string_view data, std::size_t* chars) {
  std::size_t length = 0, padding = 0;
  for (char ch : data) {
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x7F) return false;
    if (c <= 0x20) continue;
    ++length;
    if (c == '=') {
      if (++padding > 2) return false;
      continue;
    }
    if (padding > 0 || !is_base64_alphabet_char(c)) return false;
  }
  if (chars) *chars = length;
  if (length == 0) return false;
  const std::size_t remainder = length % 4;
  return remainder == 0 || (padding == 0 && remainder != 1);
}

}  // namespace sessionrt
