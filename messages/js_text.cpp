#include "messages/js_text.hpp"

#include <unicode/locid.h>
#include <unicode/stringpiece.h>
#include <unicode/unistr.h>

namespace sessionrt {
namespace {

bool in(char32_t cp, char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; }

}  // namespace

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
  // Lowercase each maximal well-formed run as one string, so that a final sigma sees its
  // context; a byte that is not UTF-8 is kept and ends the run (JavaScript would see U+FFFD
  // there, which is neither cased nor case-ignorable, so the context is the same).
  std::size_t run = 0;
  const auto flush = [&](std::size_t end) {
    if (end == run) return;
    const std::string_view piece = text.substr(run, end - run);
    const icu::StringPiece bytes(piece.data(), static_cast<int32_t>(piece.size()));
    icu::UnicodeString u = icu::UnicodeString::fromUTF8(bytes);
    u.toLower(icu::Locale::getRoot());
    if (u.isBogus())
      out.append(piece);  // ICU could not allocate: keep the text rather than drop it
    else
      u.toUTF8String(out);
  };
  for (std::size_t i = 0; i < text.size();) {
    const code_point cp = decode_utf8_at(text, i);
    if (cp.length != 0) {
      i += cp.length;
      continue;
    }
    flush(i);
    out += text[i++];
    run = i;
  }
  flush(text.size());
  return out;
}

}  // namespace sessionrt
