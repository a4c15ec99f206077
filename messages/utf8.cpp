#include "messages/utf8.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sessionrt {

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

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return s;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

bool is_valid_utf8(std::string_view sv) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(sv.data());
  const std::size_t n = sv.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path: 16 bytes at a time (a row's or a line's text is ~1 KB, checked every
    // turn), then 8.
#if defined(__SSE2__)
    while (i + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      if (_mm_movemask_epi8(v) != 0) break;  // a byte >= 0x80
      i += 16;
    }
#endif
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    const std::size_t len = decode_utf8_at(sv, i).length;
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// Each maximal invalid subpart becomes one U+FFFD (WHATWG "UTF-8 decode", what Node does when
// it reads a file as text).
std::string to_valid_utf8(std::string_view in, std::size_t* replaced_out) {
  std::size_t replaced = 0;
  std::string out;
  out.reserve(in.size());
  const std::size_t n = in.size();
  std::size_t i = 0;
  while (i < n) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b < 0x80) {
      out += in[i++];
      continue;
    }
    int need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      out += "\xEF\xBF\xBD";
      ++replaced;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    bool ok = true;
    for (int k = 0; k < need; ++k, ++j) {
      const auto c = j < n ? static_cast<unsigned char>(in[j]) : 0;
      if (j >= n || c < lo || c > hi) {
        ok = false;
        break;
      }
      lo = 0x80;
      hi = 0xBF;
    }
    if (ok) {
      out.append(in.data() + i, j - i);
    } else {
      out += "\xEF\xBF\xBD";
      ++replaced;
    }
    i = j;
  }
  if (replaced_out) *replaced_out = replaced;
  return out;
}

std::size_t utf16_length(std::string_view sv) noexcept {
  // Each byte that is not a continuation byte (10xxxxxx) starts a code point; a 4-byte lead
  // (11110xxx) starts one that needs two UTF-16 units. Counted 8 bytes at a time.
  constexpr std::uint64_t lo = 0x0101010101010101ULL;
  std::size_t units = 0, i = 0;
  const char* p = sv.data();
  for (; i + 8 <= sv.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (!(w & 0x8080808080808080ULL)) {
      units += 8;
      continue;
    }
    const std::uint64_t b7 = (w >> 7) & lo, b6 = (w >> 6) & lo, b5 = (w >> 5) & lo, b4 = (w >> 4) & lo;
    const std::uint64_t continuation = b7 & ~b6 & lo;
    const std::uint64_t astral_lead = b7 & b6 & b5 & b4;
    units += 8 - static_cast<std::size_t>(__builtin_popcountll(continuation)) +
             static_cast<std::size_t>(__builtin_popcountll(astral_lead));
  }
  for (; i < sv.size(); ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if ((c & 0xC0) != 0x80) ++units;
    if (c >= 0xF0) ++units;
  }
  return units;
}

}  // namespace sessionrt
