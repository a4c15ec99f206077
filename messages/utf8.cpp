#include "messages/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace sessionrt {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid (RFC 3629: no
// overlongs, no surrogates, nothing above U+10FFFF).
std::size_t valid_sequence(const unsigned char* s, std::size_t n, std::size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  auto cont = [&](std::size_t k) { return i + k < n && (s[i + k] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && s[i + 1] < 0xA0) return 0;  // overlong
    if (c == 0xED && s[i + 1] > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && s[i + 1] < 0x90) return 0;  // overlong
    if (c == 0xF4 && s[i + 1] > 0x8F) return 0;  // > U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view sv) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(sv.data());
  const std::size_t n = sv.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    std::size_t len = valid_sequence(s, n, i);
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
