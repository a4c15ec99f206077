#include "messages/js_text.hpp"

namespace sessionrt {
namespace {

bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

// The simple lowercase mapping of toLowerCase for the scripts named in the header.
char32_t lower_code_point(char32_t cp) {
  if (in(cp, 'A', 'Z') || (in(cp, 0xC0, 0xDE) && cp != 0xD7)) return cp + 0x20;
  const bool even = cp % 2 == 0;
  if (in(cp, 0x100, 0x17F)) {
    if (cp == 0x178) return 0xFF;
    if (even && (in(cp, 0x100, 0x12F) || in(cp, 0x132, 0x137) || in(cp, 0x14A, 0x177))) return cp + 1;
    if (!even && (in(cp, 0x139, 0x148) || in(cp, 0x179, 0x17E))) return cp + 1;
    return cp;
  }
  if (cp == 0x386) return 0x3AC;
  if (in(cp, 0x388, 0x38A)) return cp + 37;
  if (cp == 0x38C) return 0x3CC;
  if (in(cp, 0x38E, 0x38F)) return cp + 63;
  if (in(cp, 0x391, 0x3A1) || in(cp, 0x3A3, 0x3AB)) return cp + 0x20;
  if (in(cp, 0x400, 0x40F)) return cp + 0x50;
  if (in(cp, 0x410, 0x42F)) return cp + 0x20;
  if (cp == 0x4C0) return 0x4CF;
  if (even && (in(cp, 0x460, 0x481) || in(cp, 0x48A, 0x4BF) || in(cp, 0x4D0, 0x52F))) return cp + 1;
  if (!even && in(cp, 0x4C1, 0x4CE)) return cp + 1;
  if (in(cp, 0xFF21, 0xFF3A)) return cp + 0x20;
  return cp;
}

}  // namespace

code_point decode_utf8_at(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  std::size_t len = lead >= 0xF5 ? 0 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (len == 0 || i + len > s.size()) return {};
  char32_t cp = lead & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, len};
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_js_whitespace(char32_t cp) {
  return in(cp, 0x09, 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 || in(cp, 0x2000, 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

std::string_view js_trim(std::string_view text) {
  // Most text neither starts nor ends with a non-ASCII character: trim ASCII whitespace by
  // byte, and decode only when a non-ASCII byte sits at an end.
  std::size_t b = 0, e = text.size();
  auto ascii_space = [](unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0D); };
  while (b < e && ascii_space(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && ascii_space(static_cast<unsigned char>(text[e - 1]))) --e;
  if ((b == e || (static_cast<unsigned char>(text[b]) < 0x80 && static_cast<unsigned char>(text[e - 1]) < 0x80)))
    return text.substr(b, e - b);
  std::size_t begin = 0;
  while (begin < text.size()) {
    const code_point cp = decode_utf8_at(text, begin);
    if (cp.length == 0 || !is_js_whitespace(cp.value)) break;
    begin += cp.length;
  }
  std::size_t end = text.size();
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const code_point cp = decode_utf8_at(text, start);
    if (cp.length != end - start || !is_js_whitespace(cp.value)) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

std::string js_lowercase(std::string_view text) {
  std::string out;
  bool ascii = true;
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  if (ascii) {
    out.assign(text);
    for (char& c : out)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return out;
  }
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const code_point cp = decode_utf8_at(text, i);
    if (cp.length == 0) {  // not UTF-8: keep the byte
      out += text[i++];
      continue;
    }
    if (cp.value == 0x130)
      out += "i\xCC\x87";  // U+0130 -> "i" + U+0307, as toLowerCase does
    else
      append_utf8(out, lower_code_point(cp.value));
    i += cp.length;
  }
  return out;
}

}  // namespace sessionrt
