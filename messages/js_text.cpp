#include "messages/js_text.hpp"

#include <unicode/locid.h>
#include <unicode/stringpiece.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace sessionrt {
namespace {

bool ascii_space(unsigned char c) { return c == ' ' || (c >= 0x09 && c <= 0x0D); }

// Where trimStart() would start, from `begin`: past the whitespace code points.
std::size_t skip_start(std::string_view text, std::size_t begin) {
  while (begin < text.size()) {
    const code_point cp = decode_utf8_at(text, begin);
    if (cp.length == 0 || !is_js_whitespace(cp.value)) break;
    begin += cp.length;
  }
  return begin;
}

// Where trimEnd() would end, not before `begin`: back over the whitespace code points (a byte
// that is not part of a well-formed one is no whitespace).
std::size_t skip_end(std::string_view text, std::size_t begin, std::size_t end) {
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const code_point cp = decode_utf8_at(text, start);
    if (cp.length != end - start || !is_js_whitespace(cp.value)) break;
    end = start;
  }
  return end;
}

}  // namespace

bool is_js_whitespace(char32_t cp) {
  if (cp < 0x80) return ascii_space(static_cast<unsigned char>(cp));
  if (cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) return true;
  return cp < 0x110000 && u_charType(static_cast<UChar32>(cp)) == U_SPACE_SEPARATOR;
}

// Most text neither starts nor ends with a non-ASCII character: ASCII whitespace is trimmed
// by byte, and only a non-ASCII byte at an end is decoded.
std::string_view js_trim_start(std::string_view text) {
  std::size_t b = 0;
  while (b < text.size() && ascii_space(static_cast<unsigned char>(text[b]))) ++b;
  if (b == text.size() || static_cast<unsigned char>(text[b]) < 0x80) return text.substr(b);
  return text.substr(skip_start(text, b));
}

std::string_view js_trim_end(std::string_view text) {
  std::size_t e = text.size();
  while (e > 0 && ascii_space(static_cast<unsigned char>(text[e - 1]))) --e;
  if (e == 0 || static_cast<unsigned char>(text[e - 1]) < 0x80) return text.substr(0, e);
  return text.substr(0, skip_end(text, 0, e));
}

std::string_view js_trim(std::string_view text) { return js_trim_end(js_trim_start(text)); }
std::string js_trimmed(std::string_view text) { return std::string(js_trim(text)); }

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

std::string js_lower_trimmed(std::string_view text) { return js_lowercase(js_trim(text)); }

}  // namespace sessionrt
