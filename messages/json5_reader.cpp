#include "messages/json5_reader.hpp"

#include <unicode/uchar.h>

#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <string>

#include "messages/js_text.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::json5 {
namespace {

constexpr char32_t kEnd = 0xFFFFFFFF;  // past the last character
constexpr char32_t kBad = 0xFFFFFFFE;  // invalid UTF-8

struct failure {
  std::size_t at;
  std::string what;
};

bool is_line_terminator(char32_t c) { return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029; }

// ES5 IdentifierStart / IdentifierPart (escapes handled by the caller).
bool is_id_start(char32_t c) {
  if (c == '$' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  if (c < 0x80 || c >= 0x110000) return false;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
    case U_LETTER_NUMBER: return true;
    default: return false;
  }
}

bool is_id_part(char32_t c) {
  if (is_id_start(c) || (c >= '0' && c <= '9') || c == 0x200C || c == 0x200D) return true;
  if (c < 0x80 || c >= 0x110000) return false;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_NON_SPACING_MARK:
    case U_COMBINING_SPACING_MARK:
    case U_DECIMAL_DIGIT_NUMBER:
    case U_CONNECTOR_PUNCTUATION: return true;
    default: return false;
  }
}

int hex_value(char32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string describe(char32_t c) {
  if (c == kEnd) return "invalid end of input";
  if (c == kBad) return "invalid UTF-8";
  std::string shown;
  if (c < 0x20 || c == 0x7F) shown = fmt::format("\\x{:02x}", static_cast<unsigned>(c));
  else append_utf8(shown, c);
  return "invalid character '" + shown + "'";
}

class reader {
 public:
  reader(std::string_view s, const parse_options& o) : s_(s), opt_(o) {}

  boost::json::value document() {
    skip_space();
    if (peek() == kEnd) fail_here();
    boost::json::value v = value(0);
    skip_space();
    if (peek() != kEnd) fail_here();
    return v;
  }

 private:
  // The code point at pos_ and its length in bytes.
  char32_t decode(std::size_t at, std::size_t& len) const {
    len = 0;
    if (at >= s_.size()) return kEnd;
    const code_point cp = decode_utf8_at(s_, at);
    if (cp.length == 0) return kBad;
    len = cp.length;
    return cp.value;
  }

  char32_t peek() const {
    std::size_t len;
    return decode(pos_, len);
  }
  char32_t next() {
    std::size_t len;
    char32_t c = decode(pos_, len);
    if (c == kBad || c == kEnd) throw failure{pos_, describe(c)};
    pos_ += len;
    return c;
  }
  [[noreturn]] void fail_here() { throw failure{pos_, describe(peek())}; }
  [[noreturn]] void fail_at(std::size_t at, std::string what) { throw failure{at, std::move(what)}; }
  void expect(char32_t want) {
    if (peek() != want) fail_here();
    next();
  }

  void skip_space() {
    for (;;) {
      const char32_t c = peek();
      if (c == kEnd || c == kBad) return;
      if (is_js_whitespace(c)) {  // JSON5 WhiteSpace and LineTerminator are ECMAScript's
        next();
        continue;
      }
      if (c != '/') return;
      const std::size_t start = pos_;
      next();
      const char32_t kind = peek();
      if (kind == '/') {
        while (peek() != kEnd && !is_line_terminator(peek())) next();
      } else if (kind == '*') {
        next();
        for (;;) {
          if (peek() == kEnd) fail_here();
          if (next() == '*' && peek() == '/') {
            next();
            break;
          }
        }
      } else {
        pos_ = start;
        return;  // a lone '/' is refused by whoever expected a value
      }
    }
  }

  boost::json::value value(std::size_t depth) {
    const char32_t c = peek();
    switch (c) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"':
      case '\'': return boost::json::value(string_literal());
      default: break;
    }
    if (c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') || c == 'I' || c == 'N') return number();
    if (word("true")) return true;
    if (word("false")) return false;
    if (word("null")) return nullptr;
    fail_here();
  }

  // A literal word at pos_ (consumed when it matches).
  bool word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  void check_depth(std::size_t depth) {
    if (depth > opt_.max_depth) fail_at(pos_, fmt::format("nesting deeper than {} levels", opt_.max_depth));
  }

  boost::json::value object(std::size_t depth) {
    check_depth(depth);
    next();  // '{'
    boost::json::object o;
    skip_space();
    while (peek() != '}') {
      const char32_t c = peek();
      std::string key = c == '"' || c == '\'' ? string_literal() : identifier();
      skip_space();
      expect(':');
      skip_space();
      o[key] = value(depth);  // the last of duplicate keys wins, as JSON.parse
      skip_space();
      if (peek() == ',') {
        next();
        skip_space();
        continue;
      }
      if (peek() != '}') fail_here();
    }
    next();
    return o;
  }

  boost::json::value array(std::size_t depth) {
    check_depth(depth);
    next();  // '['
    boost::json::array a;
    skip_space();
    while (peek() != ']') {
      a.push_back(value(depth));
      skip_space();
      if (peek() == ',') {
        next();
        skip_space();
        continue;
      }
      if (peek() != ']') fail_here();
    }
    next();
    return a;
  }

  char32_t unicode_escape() {
    // After "\u": four hex digits.
    char32_t c = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex_value(peek());
      if (h < 0) fail_here();
      next();
      c = (c << 4) | static_cast<char32_t>(h);
    }
    return c;
  }

  // \uXXXX, joining a surrogate pair. A lone half cannot be UTF-8: it reads as U+FFFD, as the
  // JSON reader (json_reader.hpp) reads it and as Node writes such a JavaScript string to UTF-8,
  // so a JSON text means the same to both readers. A high half followed by an escape that is not
  // a low half leaves that escape to be read on its own.
  char32_t unicode_escape_joined() {
    constexpr char32_t kReplacement = 0xFFFD;
    const char32_t c = unicode_escape();
    if (c >= 0xDC00 && c <= 0xDFFF) return kReplacement;
    if (c < 0xD800 || c > 0xDBFF) return c;
    const std::size_t after_high = pos_;
    if (!word("\\u")) return kReplacement;
    const char32_t low = unicode_escape();
    if (low < 0xDC00 || low > 0xDFFF) {
      pos_ = after_high;
      return kReplacement;
    }
    return 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string string_literal() {
    const char32_t quote = next();
    std::string out;
    for (;;) {
      const char32_t c = peek();
      if (c == kEnd) fail_here();
      if (c == '\n' || c == '\r') fail_here();
      next();
      if (c == quote) return out;
      if (c != '\\') {
        append_utf8(out, c);
        continue;
      }
      const char32_t e = peek();
      if (e == kEnd) fail_here();
      switch (e) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case '0':
          next();
          if (peek() >= '0' && peek() <= '9') fail_here();
          out += '\0';
          continue;
        case 'x': {
          next();
          int value = 0;
          for (int i = 0; i < 2; ++i) {
            const int h = hex_value(peek());
            if (h < 0) fail_here();
            next();
            value = value * 16 + h;
          }
          append_utf8(out, static_cast<char32_t>(value));
          continue;
        }
        case 'u':
          next();
          append_utf8(out, unicode_escape_joined());
          continue;
        case '\r':
          next();
          if (peek() == '\n') next();
          continue;
        case '\n':
        case 0x2028:
        case 0x2029: next(); continue;  // a line continuation
        default:
          if (e >= '1' && e <= '9') fail_here();
          append_utf8(out, e);  // any other character stands for itself
          break;
      }
      next();
    }
  }

  // An ES5 IdentifierName, \uXXXX escapes included (each must be a valid identifier character).
  std::string identifier() {
    std::string out;
    bool first = true;
    for (;;) {
      const std::size_t at = pos_;
      char32_t c = peek();
      if (c == '\\') {
        next();
        if (peek() != 'u') fail_here();
        next();
        c = unicode_escape();
        if (!(first ? is_id_start(c) : is_id_part(c))) fail_at(at, describe(c));
        append_utf8(out, c);
      } else if (first ? is_id_start(c) : is_id_part(c)) {
        next();
        append_utf8(out, c);
      } else {
        if (first) fail_here();
        return out;
      }
      first = false;
    }
  }

  boost::json::value number() {
    bool negative = false;
    if (peek() == '+' || peek() == '-') negative = next() == '-';
    if (word("Infinity"))
      return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (word("NaN")) return std::numeric_limits<double>::quiet_NaN();
    const std::size_t start = pos_;
    if (peek() == '0' && (s_.substr(pos_, 2) == "0x" || s_.substr(pos_, 2) == "0X")) {
      pos_ += 2;
      std::uint64_t v = 0;
      bool overflow = false, any = false;
      double dv = 0;
      while (hex_value(peek()) >= 0) {
        const auto h = static_cast<std::uint64_t>(hex_value(next()));
        any = true;
        dv = dv * 16 + static_cast<double>(h);
        if (v > (std::numeric_limits<std::uint64_t>::max() >> 4)) overflow = true;
        v = (v << 4) | h;
      }
      if (!any) fail_here();
      if (negative && v == 0) return -0.0;  // -0x0 is -0 in JS
      if (!overflow && v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
      return negative ? -dv : dv;
    }
    auto digits = [&] {
      std::size_t n = 0;
      while (peek() >= '0' && peek() <= '9') {
        next();
        ++n;
      }
      return n;
    };
    std::size_t int_digits = 0;
    if (peek() == '0') {
      next();
      int_digits = 1;
      if (peek() >= '0' && peek() <= '9') fail_here();  // no octal-looking numbers
    } else {
      int_digits = digits();
    }
    bool integral = true;
    std::size_t frac_digits = 0;
    if (peek() == '.') {
      integral = false;
      next();
      frac_digits = digits();
    }
    if (int_digits == 0 && frac_digits == 0) fail_here();
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      next();
      if (peek() == '+' || peek() == '-') next();
      if (digits() == 0) fail_here();
    }
    std::string text(s_.substr(start, pos_ - start));
    if (integral) {
      std::int64_t v = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
        if (negative && v == 0) return -0.0;  // JSON.parse("-0") is -0
        return negative ? -v : v;
      }
    }
    if (text.front() == '.') text.insert(text.begin(), '0');  // from_chars wants a digit first
    double d = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), d);
    if (r.ec == std::errc::result_out_of_range)  // as JS: 1e400 is Infinity, 1e-400 is 0
      d = text.find_first_of("-") != std::string::npos ? 0.0 : std::numeric_limits<double>::infinity();
    else if (r.ec != std::errc() || r.ptr != text.data() + text.size())
      fail_at(start, "an unreadable number");
    return negative ? -d : d;
  }

  std::string_view s_;
  parse_options opt_;
  std::size_t pos_ = 0;
};

// 1-based line ('\n' counted, as the reference implementation counts) and column in code points.
std::pair<std::size_t, std::size_t> line_column(std::string_view s, std::size_t at) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < at && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

result<boost::json::value> parse(std::string_view text, const parse_options& options) {
  try {
    return reader(text, options).document();
  } catch (const failure& f) {
    const auto [line, column] = line_column(text, f.at);
    return status(errc::invalid_argument, fmt::format("line {}, column {}: {}", line, column, f.what));
  }
}

}  // namespace sessionrt::json5
