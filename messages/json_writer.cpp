#include "messages/json_writer.hpp"

#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sessionrt::json {
namespace {

constexpr std::int64_t kMaxSafeInteger = 9007199254740991LL;  // 2^53 - 1

// True for bytes JSON.stringify escapes: '"', '\\' and C0 controls.
constexpr bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

void append_value(std::string& out, const boost::json::value& v, int level, bool pretty);

void append_indent(std::string& out, int level) { out.append(static_cast<std::size_t>(level) * 2, ' '); }

// A line break and the indent of `level`, in one append while the indent fits the buffer.
void append_break(std::string& out, int level) {
  static constexpr char kBreak[] = "\n                                                                ";  // 64 spaces
  const std::size_t n = static_cast<std::size_t>(level) * 2;
  if (n + 1 < sizeof kBreak) {
    out.append(kBreak, n + 1);
  } else {
    out += '\n';
    append_indent(out, level);
  }
}

void append_object(std::string& out, const boost::json::object& o, int level, bool pretty) {
  if (o.empty()) {
    out += "{}";
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& kv : o) {
    if (!first) out += ',';
    first = false;
    if (pretty) append_break(out, level + 1);
    append_string(out, kv.key());
    if (pretty)
      out.append(": ", 2);
    else
      out += ':';
    append_value(out, kv.value(), level + 1, pretty);
  }
  if (pretty) append_break(out, level);
  out += '}';
}

void append_array(std::string& out, const boost::json::array& a, int level, bool pretty) {
  if (a.empty()) {
    out += "[]";
    return;
  }
  out += '[';
  bool first = true;
  for (const auto& e : a) {
    if (!first) out += ',';
    first = false;
    if (pretty) append_break(out, level + 1);
    append_value(out, e, level + 1, pretty);
  }
  if (pretty) append_break(out, level);
  out += ']';
}

void append_value(std::string& out, const boost::json::value& v, int level, bool pretty) {
  switch (v.kind()) {
    case boost::json::kind::null: out.append("null", 4); break;
    case boost::json::kind::bool_:
      if (v.get_bool())
        out.append("true", 4);
      else
        out.append("false", 5);
      break;
    case boost::json::kind::int64: append_number(out, v.get_int64()); break;
    case boost::json::kind::uint64: {
      std::uint64_t u = v.get_uint64();
      if (u <= static_cast<std::uint64_t>(kMaxSafeInteger))
        append_number(out, static_cast<std::int64_t>(u));
      else
        append_number(out, static_cast<double>(u));
      break;
    }
    case boost::json::kind::double_: append_number(out, v.get_double()); break;
    case boost::json::kind::string: append_string(out, v.get_string()); break;
    case boost::json::kind::array: append_array(out, v.get_array(), level, pretty); break;
    case boost::json::kind::object: append_object(out, v.get_object(), level, pretty); break;
  }
}

}  // namespace

void append_number(std::string& out, std::int64_t i) {
  if (i > kMaxSafeInteger || i < -kMaxSafeInteger) {
    append_number(out, static_cast<double>(i));
    return;
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}

// ECMAScript Number::toString(10): shortest digits s (k of them) with decimal exponent n
// such that value = 0.s * 10^n, then one of four layouts depending on n.
void append_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  if (d == 0) {
    out += '0';
    return;
  }
  // Integral values below 2^53 print as integers; the shortest-digits path is slower.
  if (d < 9007199254740992.0 && d > -9007199254740992.0 && d == static_cast<double>(static_cast<std::int64_t>(d))) {
    append_number(out, static_cast<std::int64_t>(d));
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* p = buf;
  const char* end = r.ptr;
  if (*p == '-') {
    out += '-';
    ++p;
  }
  char digits[32];
  int k = 0;
  while (p < end && *p != 'e') {
    if (*p != '.') digits[k++] = *p;
    ++p;
  }
  int exp10 = 0;
  std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), end, exp10);
  const int n = exp10 + 1;
  if (k <= n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(k));
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits + n, static_cast<std::size_t>(k - n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out.append(digits, static_cast<std::size_t>(k));
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits + 1, static_cast<std::size_t>(k - 1));
    }
    out += 'e';
    out += (n - 1 >= 0) ? '+' : '-';
    char eb[8];
    auto er = std::to_chars(eb, eb + sizeof eb, std::abs(n - 1));
    out.append(eb, er.ptr);
  }
}

namespace {

// Bytes JSON.stringify escapes, as a table: a short key or value is scanned a byte at a time.
constexpr std::array<bool, 256> kEscapes = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = needs_escape(static_cast<unsigned char>(c));
  return t;
}();

// Whether any of the 8 bytes in `w` needs escaping: < 0x20 ((w - 0x20..) borrows into the high
// bit of such a byte; bytes >= 0x80 are masked out by ~w), '"' or '\\'. Exact for "any".
inline bool word_needs_escape(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - ones) & ~x & highs; };
  return (((w - ones * 0x20) & ~w & highs) | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'))) != 0;
}

#if defined(__SSE2__)
// A bit per byte of the 16 at `p` that needs escaping: its top three bits are zero (< 0x20),
// or it is '"' or '\\' (SSE2 is part of x86-64).
inline unsigned escape_mask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i hit =
      _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xE0))), _mm_setzero_si128()),
                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
  return static_cast<unsigned>(_mm_movemask_epi8(hit));
}
#endif

// Index of the first byte at or after `i` that JSON.stringify escapes, or s.size(). Runs for
// every key and value written: 16 bytes at a time from 16 bytes on (the last 16 read again,
// overlapping, instead of a byte loop over the tail), two overlapping words from 8 bytes on,
// a table lookup per byte below that.
inline std::size_t next_escape(std::string_view s, std::size_t i) {
  const char* p = s.data();
  const std::size_t n = s.size();
#if defined(__SSE2__)
  if (n - i >= 16) {
    for (; i + 16 <= n; i += 16)
      if (const unsigned mask = escape_mask16(p + i); mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
    if (i == n) return n;
    // The bytes before i are clean, so a hit in the overlap is at or after i.
    if (const unsigned mask = escape_mask16(p + n - 16); mask != 0)
      return n - 16 + static_cast<std::size_t>(__builtin_ctz(mask));
    return n;
  }
#endif
  if (n - i >= 8) {
    std::uint64_t head, tail;
    std::memcpy(&head, p + i, 8);
    std::memcpy(&tail, p + n - 8, 8);
    if (!word_needs_escape(head) && !word_needs_escape(tail)) return n;
  }
  for (; i < n; ++i)
    if (kEscapes[static_cast<unsigned char>(p[i])]) return i;
  return n;
}

}  // namespace

void append_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  std::size_t i = next_escape(s, 0);
  if (i == s.size()) {  // most strings: nothing to escape, one copy between the quotes
    out += '"';
    out.append(s.data(), s.size());
    out += '"';
    return;
  }
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  std::size_t run = 0;
  for (; i < s.size(); i = next_escape(s, i + 1)) {
    const auto c = static_cast<unsigned char>(s[i]);
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        out.append(esc, 6);
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void append_compact(std::string& out, const boost::json::value& v) { append_value(out, v, 0, false); }
void append_compact(std::string& out, const boost::json::object& o) { append_object(out, o, 0, false); }
void append_compact(std::string& out, const boost::json::array& a) { append_array(out, a, 0, false); }

namespace {
template <class T>
std::string compact_text(const T& v) {
  std::string out;
  append_compact(out, v);
  return out;
}
template <class T>
std::string pretty_text(const T& v) {
  std::string out;
  append_pretty(out, v, 0);
  return out;
}
}  // namespace

std::string to_compact(const boost::json::value& v) { return compact_text(v); }
std::string to_compact(const boost::json::object& o) { return compact_text(o); }
std::string to_compact(const boost::json::array& a) { return compact_text(a); }

void append_pretty(std::string& out, const boost::json::value& v, int level) { append_value(out, v, level, true); }
void append_pretty(std::string& out, const boost::json::object& o, int level) { append_object(out, o, level, true); }

std::string to_pretty(const boost::json::value& v) { return pretty_text(v); }
std::string to_pretty(const boost::json::object& o) { return pretty_text(o); }

bool same_text(const boost::json::value& a, const boost::json::value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case boost::json::kind::null: return true;
    case boost::json::kind::bool_: return a.get_bool() == b.get_bool();
    case boost::json::kind::int64: return a.get_int64() == b.get_int64();
    case boost::json::kind::uint64: return a.get_uint64() == b.get_uint64();
    case boost::json::kind::double_: return a.get_double() == b.get_double();
    case boost::json::kind::string: return a.get_string() == b.get_string();
    case boost::json::kind::array: {
      const auto& x = a.get_array();
      const auto& y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same_text(x[i], y[i])) return false;
      return true;
    }
    case boost::json::kind::object: {
      const auto& x = a.get_object();
      const auto& y = b.get_object();
      if (x.size() != y.size()) return false;
      for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
        if (i->key() != j->key() || !same_text(i->value(), j->value())) return false;
      return true;
    }
  }
  return false;
}


}  // namespace sessionrt::json
