#include "messages/js_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "messages/js_text.hpp"
#include "messages/utf8.hpp"

namespace sessionrt {

struct js_regex::impl {
  pcre2_code* code = nullptr;
  std::size_t groups = 0;
  bool jit = false;
  std::string source;
  std::string flags;
  std::string pattern;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() { pcre2_code_free(code); }
};

namespace {

// JavaScript's \s: WhiteSpace and LineTerminator (ECMA-262 22.2.2.9, Unicode Zs as of V8's ICU).
constexpr std::string_view kSpaceSet =
    R"(\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF})";
constexpr std::string_view kLineTerminators = R"(\n\r\x{2028}\x{2029})";
// The two non-ASCII characters whose simple case folding is ASCII (U+017F -> s, U+212A -> k).
constexpr std::string_view kFoldsToAscii = R"(\x{17F}\x{212A})";
// \w of a regex with both i and u: the ASCII word characters and what folds to them.
constexpr std::string_view kWordIU = R"(\w\x{17F}\x{212A})";
constexpr std::string_view kAny = R"([\x{0}-\x{10FFFF}])";  // a class, so repeats of it stay fast
constexpr std::string_view kNever = "(?!)";

struct js_flags {
  bool i = false;
  bool m = false;
  bool s = false;
  bool u = false;
};

std::string hex_escape(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\x{%X}", static_cast<unsigned>(cp));
  return buf;
}

bool is_ascii_alnum(char32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }
bool is_surrogate(char32_t cp) { return cp >= 0xD800 && cp <= 0xDFFF; }

class translator {
 public:
  translator(std::string_view src, js_flags f) : src_(src), f_(f) {}

  // The PCRE2 pattern, or the reason the source cannot be translated.
  result<std::string> run() {
    count_groups();
    while (pos_ < src_.size() && error_.empty()) term();
    if (!error_.empty()) return status(errc::invalid_argument, error_);
    return std::move(out_);
  }

 private:
  void fail(std::string what) {
    if (error_.empty()) error_ = what + " at offset " + std::to_string(pos_);
  }
  bool at_end() const { return pos_ >= src_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

  // One source character (a code point), consumed.
  char32_t next_char() {
    const code_point cp = decode_utf8_at(src_, pos_);
    pos_ += cp.length == 0 ? 1 : cp.length;  // the source was checked to be valid UTF-8
    return cp.value;
  }

  // Capturing groups: "(" not followed by "?", and "(?<name>".
  void count_groups() {
    bool in_class = false;
    for (std::size_t k = 0; k < src_.size(); ++k) {
      const char c = src_[k];
      if (c == '\\') {
        ++k;
      } else if (in_class) {
        in_class = c != ']';
      } else if (c == '[') {
        in_class = true;
      } else if (c == '(') {
        if (k + 1 >= src_.size() || src_[k + 1] != '?') {
          ++groups_;
        } else if (k + 3 < src_.size() && src_[k + 2] == '<' && src_[k + 3] != '=' && src_[k + 3] != '!') {
          ++groups_;
          named_groups_ = true;
        }
      }
    }
  }

  // A literal character outside a class.
  void literal(char32_t cp) {
    if (f_.i && !f_.u) {
      // Without u, V8's case-insensitive match never pairs ASCII with non-ASCII characters.
      switch (cp) {
        case 's': case 'S': out_ += "(?-i:[sS])"; return;
        case 'k': case 'K': out_ += "(?-i:[kK])"; return;
        case 0x17F: case 0x212A: out_ += "(?-i:" + hex_escape(cp) + ")"; return;
        default: break;
      }
    }
    out_ += class_literal(cp);
  }

  // A character as PCRE2 text that is literal both inside and outside a class.
  static std::string class_literal(char32_t cp) {
    if (is_ascii_alnum(cp)) return std::string(1, static_cast<char>(cp));
    if (cp > 0x20 && cp < 0x7F) return std::string{'\\', static_cast<char>(cp)};
    return hex_escape(cp);
  }

  void term() {
    const char c = peek();
    switch (c) {
      case '\\': ++pos_; escape(); return;
      case '[': ++pos_; char_class(); return;
      case '.':
        ++pos_;
        out_ += f_.s ? std::string(kAny) : "[^" + std::string(kLineTerminators) + "]";
        return;
      case '^':
        ++pos_;
        out_ += f_.m ? "(?<![^" + std::string(kLineTerminators) + "])" : "\\A";
        return;
      case '$':
        ++pos_;
        out_ += f_.m ? "(?![^" + std::string(kLineTerminators) + "])" : "\\z";
        return;
      case '(': group_open(); return;
      case ')': case '|': case '*': case '+': case '?':
        ++pos_;
        out_ += c;
        return;
      case '{':
        if (const std::size_t n = quantifier_length(); n > 0) {
          out_ += src_.substr(pos_, n);
          pos_ += n;
          return;
        }
        literal(next_char());  // without u, a "{" that is no quantifier is literal
        return;
      default: literal(next_char()); return;
    }
  }

  // The length of a {n}, {n,} or {n,m} quantifier at pos_, or 0.
  std::size_t quantifier_length() const {
    std::size_t k = pos_ + 1;
    auto digits = [&] {
      const std::size_t start = k;
      while (k < src_.size() && src_[k] >= '0' && src_[k] <= '9') ++k;
      return k > start;
    };
    if (!digits()) return 0;
    if (k < src_.size() && src_[k] == ',') {
      ++k;
      digits();
    }
    return k < src_.size() && src_[k] == '}' ? k + 1 - pos_ : 0;
  }

  void group_open() {
    ++pos_;
    if (peek() != '?') {
      out_ += '(';
      return;
    }
    const char kind = peek(1);
    if (kind == ':' || kind == '=' || kind == '!') {
      out_ += src_.substr(pos_ - 1, 3);
      pos_ += 2;
      return;
    }
    if (kind == '<' && (peek(2) == '=' || peek(2) == '!')) {
      out_ += src_.substr(pos_ - 1, 4);
      pos_ += 3;
      return;
    }
    if (kind == '<') {
      const std::size_t close = src_.find('>', pos_ + 2);
      if (close == std::string_view::npos) return fail("unterminated group name");
      out_ += src_.substr(pos_ - 1, close + 2 - pos_);
      pos_ = close + 1;
      return;
    }
    fail("unsupported group syntax \"(?" + std::string(1, kind) + "\"");
  }

  // \b \B with i+u: word characters include U+017F and U+212A.
  static std::string word_boundary(bool negated) {
    const std::string w = "[" + std::string(kWordIU) + "]";
    if (negated) return "(?:(?<=" + w + ")(?=" + w + ")|(?<!" + w + ")(?!" + w + "))";
    return "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))";
  }

  // \xHH, \uHHHH, \u{H..} (u), after the letter; nullopt (nothing consumed) when not one.
  std::optional<char32_t> hex_escape_value(char letter) {
    if (letter == 'x') {
      if (!is_hex(peek()) || !is_hex(peek(1))) return std::nullopt;
      const char32_t v = static_cast<char32_t>(hex_value(peek()) * 16 + hex_value(peek(1)));
      pos_ += 2;
      return v;
    }
    if (f_.u && peek() == '{') {
      std::size_t k = pos_ + 1;
      char32_t v = 0;
      while (k < src_.size() && is_hex(src_[k]) && v <= 0x10FFFF)
        v = v * 16 + static_cast<char32_t>(hex_value(src_[k++]));
      if (k == pos_ + 1 || k >= src_.size() || src_[k] != '}' || v > 0x10FFFF) return std::nullopt;
      pos_ = k + 1;
      return v;
    }
    auto four = [&](std::size_t at) -> std::optional<char32_t> {
      if (at + 4 > src_.size()) return std::nullopt;
      char32_t v = 0;
      for (std::size_t k = at; k < at + 4; ++k) {
        if (!is_hex(src_[k])) return std::nullopt;
        v = v * 16 + static_cast<char32_t>(hex_value(src_[k]));
      }
      return v;
    };
    const auto v = four(pos_);
    if (!v) return std::nullopt;
    pos_ += 4;
    if (f_.u && *v >= 0xD800 && *v <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {
      const auto trail = four(pos_ + 2);
      if (trail && *trail >= 0xDC00 && *trail <= 0xDFFF) {
        pos_ += 6;
        return 0x10000 + ((*v - 0xD800) << 10) + (*trail - 0xDC00);
      }
    }
    return v;
  }

  // Annex B legacy octal escape, first digit at pos_ (0-7).
  char32_t legacy_octal() {
    const char first = peek();
    std::size_t max_digits = first <= '3' ? 3 : 2;
    char32_t v = 0;
    for (std::size_t n = 0; n < max_digits && peek() >= '0' && peek() <= '7'; ++n)
      v = v * 8 + static_cast<char32_t>(next_char() - '0');
    return v;
  }

  // \p{..} / \P{..} after the letter (u only).
  std::optional<std::string> property_escape(bool negated) {
    if (peek() != '{') return std::nullopt;
    const std::size_t close = src_.find('}', pos_);
    if (close == std::string_view::npos) return std::nullopt;
    std::string body(src_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    const std::size_t eq = body.find('=');
    if (eq == std::string::npos) {
      if (body == "Assigned") return std::string(negated ? "\\p{Cn}" : "\\P{Cn}");
      body = short_category(body);
    } else {
      const std::string name = body.substr(0, eq);
      const std::string value = body.substr(eq + 1);
      if (name == "General_Category" || name == "gc") {
        body = short_category(value);
      } else if (name == "Script" || name == "sc") {
        body = "sc:" + value;
      } else if (name == "Script_Extensions" || name == "scx") {
        body = "scx:" + value;
      } else {
        fail("unknown Unicode property \"" + name + "\"");
        return std::string();
      }
    }
    return std::string(negated ? "\\P{" : "\\p{") + body + "}";
  }

  // General_Category long names (and aliases) JavaScript accepts; PCRE2 knows the short ones.
  static std::string short_category(const std::string& name) {
    static constexpr std::pair<std::string_view, std::string_view> names[] = {
        {"Letter", "L"}, {"Cased_Letter", "LC"}, {"Uppercase_Letter", "Lu"}, {"Lowercase_Letter", "Ll"},
        {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"}, {"Other_Letter", "Lo"}, {"Mark", "M"},
        {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"}, {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"},
        {"Number", "N"}, {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Letter_Number", "Nl"},
        {"Other_Number", "No"}, {"Punctuation", "P"}, {"punct", "P"}, {"Connector_Punctuation", "Pc"},
        {"Dash_Punctuation", "Pd"}, {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"},
        {"Initial_Punctuation", "Pi"}, {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"},
        {"Symbol", "S"}, {"Math_Symbol", "Sm"}, {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"},
        {"Other_Symbol", "So"}, {"Separator", "Z"}, {"Space_Separator", "Zs"}, {"Line_Separator", "Zl"},
        {"Paragraph_Separator", "Zp"}, {"Other", "C"}, {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"},
        {"Surrogate", "Cs"}, {"Private_Use", "Co"}, {"Unassigned", "Cn"},
    };
    for (const auto& [long_name, short_name] : names)
      if (name == long_name) return std::string(short_name);
    return name;
  }

  void surrogate_error() { fail("a lone surrogate cannot match UTF-8 text"); }

  // An escape outside a class, after the backslash.
  void escape() {
    if (at_end()) return fail("\\ at end of pattern");
    const char c = peek();
    const bool iu = f_.i && f_.u;
    switch (c) {
      case 'd': case 'D': ++pos_; out_ += '\\'; out_ += c; return;
      case 'w': ++pos_; out_ += iu ? "[" + std::string(kWordIU) + "]" : "\\w"; return;
      case 'W': ++pos_; out_ += iu ? "[^" + std::string(kWordIU) + "]" : "\\W"; return;
      case 's': ++pos_; out_ += "[" + std::string(kSpaceSet) + "]"; return;
      case 'S': ++pos_; out_ += "[^" + std::string(kSpaceSet) + "]"; return;
      case 'b': ++pos_; out_ += iu ? word_boundary(false) : "\\b"; return;
      case 'B': ++pos_; out_ += iu ? word_boundary(true) : "\\B"; return;
      case 'f': case 'n': case 'r': case 't': ++pos_; out_ += '\\'; out_ += c; return;
      case 'v': ++pos_; out_ += "\\x{0B}"; return;
      case 'c': {
        const char letter = peek(1);
        if ((letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z')) {
          pos_ += 2;
          out_ += hex_escape(static_cast<char32_t>(letter % 32));
        } else {
          out_ += "\\\\";  // "\c" without a letter is a backslash; the c is read next
        }
        return;
      }
      case 'x': case 'u': {
        ++pos_;
        const auto v = hex_escape_value(c);
        if (!v) {
          if (f_.u) return fail(std::string("invalid \\") + c + " escape");
          return literal(static_cast<char32_t>(c));
        }
        if (is_surrogate(*v)) return surrogate_error();
        return literal(*v);
      }
      case 'k': {
        ++pos_;
        if (!named_groups_ && !f_.u) return literal('k');
        const std::size_t close = src_.find('>', pos_);
        if (peek() != '<' || close == std::string_view::npos) return fail("invalid named reference");
        out_ += "\\k";
        out_ += src_.substr(pos_, close + 1 - pos_);
        pos_ = close + 1;
        return;
      }
      case 'p': case 'P': {
        ++pos_;
        if (!f_.u) return literal(static_cast<char32_t>(c));
        const auto p = property_escape(c == 'P');
        if (!p) return fail("invalid property escape");
        out_ += *p;
        return;
      }
      default: break;
    }
    if (c >= '0' && c <= '9') return decimal_escape();
    literal(next_char());  // identity escape: \. \/ \- and, without u, any other character
  }

  // \0, backreferences \N, and (without u) Annex B octal / \8 \9.
  void decimal_escape() {
    if (peek() == '0' && !(peek(1) >= '0' && peek(1) <= '9')) {
      ++pos_;
      out_ += "\\x{0}";
      return;
    }
    std::size_t k = pos_;
    std::size_t n = 0;
    while (k < src_.size() && src_[k] >= '0' && src_[k] <= '9' && n <= groups_)
      n = n * 10 + static_cast<std::size_t>(src_[k++] - '0');
    if (peek() != '0' && n >= 1 && n <= groups_) {
      while (k < src_.size() && src_[k] >= '0' && src_[k] <= '9') ++k;
      pos_ = k;
      out_ += "\\g{" + std::to_string(n) + "}";
      return;
    }
    if (f_.u) return fail("invalid escape (backreference to a missing group)");
    if (peek() >= '8') return literal(next_char());
    literal(legacy_octal());
  }

  // A class, after "[".
  void char_class() {
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    std::string body;
    std::vector<std::string> complements;  // \S (and \W with i+u): sets whose complement is in the class
    bool previous_was_set = false;
    // Does the class hold s, S, k, K, U+017F or U+212A (alone or in a range)? Only then can
    // PCRE2's caseless class differ from V8's without u (for the six of them).
    bool fold_sensitive = false;
    bool has_s = false;  // s or S
    bool has_k = false;  // k or K
    std::optional<char32_t> last_char;  // the previous single character, a possible range start
    bool range_open = false;
    auto add_char = [&](char32_t cp) {
      body += class_literal(cp);
      const char32_t lo = range_open && last_char ? std::min(*last_char, cp) : cp;
      const char32_t hi = range_open && last_char ? std::max(*last_char, cp) : cp;
      auto covers = [&](char32_t f) { return f >= lo && f <= hi; };
      has_s = has_s || covers('s') || covers('S');
      has_k = has_k || covers('k') || covers('K');
      fold_sensitive = fold_sensitive || has_s || has_k || covers(0x17F) || covers(0x212A);
      last_char = range_open ? std::nullopt : std::optional<char32_t>(cp);
      range_open = false;
    };
    auto is_set_escape_at = [&](std::size_t at) {
      if (at + 1 >= src_.size() || src_[at] != '\\') return false;
      const char e = src_[at + 1];
      return e == 'd' || e == 'D' || e == 's' || e == 'S' || e == 'w' || e == 'W' ||
             (f_.u && (e == 'p' || e == 'P'));
    };
    for (;;) {
      if (at_end()) return fail("missing ] of a character class");
      const char c = peek();
      if (c == ']') {
        ++pos_;
        break;
      }
      bool is_set = false;
      if (c == '\\') {
        ++pos_;
        if (at_end()) return fail("\\ at end of pattern");
        const char e = peek();
        switch (e) {
          case 'd': case 'D': ++pos_; body += '\\'; body += e; is_set = true; break;
          case 'w': ++pos_; body += (f_.i && f_.u) ? std::string(kWordIU) : "\\w"; is_set = true; break;
          case 'W':
            ++pos_;
            if (f_.i && f_.u) complements.emplace_back(kWordIU);
            else body += "\\W";
            is_set = true;
            break;
          case 's': ++pos_; body += kSpaceSet; is_set = true; break;
          case 'S': ++pos_; complements.emplace_back(kSpaceSet); is_set = true; break;
          case 'b': ++pos_; add_char(0x08); break;
          case '-': ++pos_; add_char('-'); break;
          case 'f': ++pos_; add_char(0x0C); break;
          case 'n': ++pos_; add_char(0x0A); break;
          case 'r': ++pos_; add_char(0x0D); break;
          case 't': ++pos_; add_char(0x09); break;
          case 'v': ++pos_; add_char(0x0B); break;
          case 'c': {
            const char letter = peek(1);
            if ((letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z') ||
                (!f_.u && ((letter >= '0' && letter <= '9') || letter == '_'))) {
              pos_ += 2;
              add_char(static_cast<char32_t>(letter % 32));
            } else {
              add_char('\\');  // "\c" without a letter is a backslash; the c is read next
            }
            break;
          }
          case 'x': case 'u': {
            ++pos_;
            const auto v = hex_escape_value(e);
            if (!v) {
              if (f_.u) return fail(std::string("invalid \\") + e + " escape");
              add_char(static_cast<char32_t>(e));
            } else if (is_surrogate(*v)) {
              return surrogate_error();
            } else {
              add_char(*v);
            }
            break;
          }
          case 'p': case 'P': {
            ++pos_;
            if (!f_.u) {
              add_char(static_cast<char32_t>(e));
              break;
            }
            const auto p = property_escape(e == 'P');
            if (!p) return fail("invalid property escape");
            body += *p;
            is_set = true;
            break;
          }
          default:
            if (e >= '0' && e <= '9') {
              if (e == '0' && !(peek(1) >= '0' && peek(1) <= '9')) {
                ++pos_;
                add_char(0);
              } else if (f_.u) {
                return fail("invalid class escape");
              } else if (e >= '8') {
                add_char(next_char());
              } else {
                add_char(legacy_octal());
              }
            } else {
              add_char(next_char());
            }
            break;
        }
        if (!error_.empty()) return;
      } else if (c == '-') {
        ++pos_;
        // A hyphen next to \d, \s, \w, \p{..} is literal in JavaScript; PCRE2 wants it escaped.
        const bool literal_hyphen = previous_was_set || is_set_escape_at(pos_);
        body += literal_hyphen ? "\\-" : "-";
        range_open = !literal_hyphen && last_char.has_value();
        if (!range_open) last_char.reset();
      } else if (c == '[') {
        ++pos_;
        add_char('[');
      } else {
        add_char(next_char());
      }
      previous_was_set = is_set;
      if (is_set) last_char.reset();
    }

    // [\s\S] and the like: a set and its complement make "any character".
    const bool everything = std::any_of(complements.begin(), complements.end(),
                                        [&](const std::string& set) { return body.find(set) != std::string::npos; });
    auto build = [&](const std::string& items) -> std::string {
      if (everything) return std::string(negated ? kNever : kAny);
      if (complements.empty()) {
        if (items.empty()) return std::string(negated ? kAny : kNever);
        return "[" + std::string(negated ? "^" : "") + items + "]";
      }
      std::string core = "(?:";
      if (!negated) {
        if (!items.empty()) core += "[" + items + "]|";
        for (std::size_t k = 0; k < complements.size(); ++k) core += (k ? "|[^" : "[^") + complements[k] + "]";
      } else {
        if (!items.empty()) core += "(?![" + items + "])";
        for (const auto& set : complements) core += "(?=[" + set + "])";
        core += kAny;
      }
      return core + ")";
    };
    std::string core = build(body);
    if (f_.i && !f_.u && fold_sensitive) {
      // V8 without u: s S k K match the class when it holds them in either ASCII case, U+017F
      // and U+212A only when it holds them; PCRE2's Unicode folding would pair the six.
      std::string closed = body;
      if (has_s) closed += "sS";
      if (has_k) closed += "kK";
      const std::string six = "(?-i:[sSkK" + std::string(kFoldsToAscii) + "])";
      core = "(?:(?!" + six + ")" + core + "|(?=" + six + ")(?-i:" + build(closed) + "))";
    }
    out_ += core;
  }

  std::string_view src_;
  js_flags f_;
  std::size_t pos_ = 0;
  std::size_t groups_ = 0;
  bool named_groups_ = false;
  std::string out_;
  std::string error_;
};

result<js_flags> parse_flags(std::string_view flags) {
  js_flags f;
  for (char c : flags) {
    bool* slot = c == 'i' ? &f.i : c == 'm' ? &f.m : c == 's' ? &f.s : c == 'u' ? &f.u : nullptr;
    if (slot == nullptr)
      return status(errc::invalid_argument, std::string("unsupported flag '") + c + "' (i, m, s, u only)");
    if (*slot) return status(errc::invalid_argument, std::string("flag '") + c + "' given twice");
    *slot = true;
  }
  return f;
}

// --- matching ---

// Per-thread PCRE2 match state: match data sized for the largest regex seen, and a JIT stack.
struct thread_state {
  pcre2_match_data* data = nullptr;
  std::uint32_t pairs = 0;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;

  thread_state() = default;
  thread_state(const thread_state&) = delete;
  thread_state& operator=(const thread_state&) = delete;
  ~thread_state() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(jit_stack);
  }

  pcre2_match_data* match_data(std::size_t groups) {
    const auto need = static_cast<std::uint32_t>(std::max<std::size_t>(groups + 1, 16));
    if (data == nullptr || pairs < need) {
      pcre2_match_data_free(data);
      data = pcre2_match_data_create(need, nullptr);
      pairs = data ? need : 0;
    }
    return data;
  }

  pcre2_match_context* match_context() {
    if (context == nullptr) {
      context = pcre2_match_context_create(nullptr);
      jit_stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
      if (context != nullptr && jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
    return context;
  }
};

thread_local thread_state tls;

// The subject PCRE2 sees: the text itself when it is valid UTF-8, otherwise a copy in which
// every byte that does not start a well-formed sequence is U+FFFD (3 bytes).
struct subject {
  std::string_view text;
  std::string storage;
  std::vector<std::size_t> replaced;  // original offsets of the replaced bytes, ascending

  explicit subject(std::string_view original) : text(original) {
    if (is_valid_utf8(original)) return;
    storage.reserve(original.size() + 16);
    for (std::size_t i = 0; i < original.size();) {
      const code_point cp = decode_utf8_at(original, i);
      if (cp.length == 0) {
        replaced.push_back(i);
        storage += "\xEF\xBF\xBD";
        ++i;
      } else {
        storage.append(original.substr(i, cp.length));
        i += cp.length;
      }
    }
    text = storage;
  }

  std::size_t to_subject(std::size_t original) const {
    const auto before = std::lower_bound(replaced.begin(), replaced.end(), original) - replaced.begin();
    return original + 2 * static_cast<std::size_t>(before);
  }
  std::size_t to_original(std::size_t offset) const {
    // The k-th replaced byte (0-based) starts at replaced[k] + 2k in the subject.
    std::size_t lo = 0;
    std::size_t hi = replaced.size();
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (replaced[mid] + 2 * mid < offset) lo = mid + 1;
      else hi = mid;
    }
    return offset - 2 * lo;
  }
};

// pcre2_match from `from`; the ovector is in tls.data when the result is > 0.
int run_match(const js_regex::impl& re, const subject& s, std::size_t from) {
  pcre2_match_data* data = tls.match_data(re.groups);
  if (data == nullptr) return PCRE2_ERROR_NOMEMORY;
  std::size_t start = s.to_subject(from);
  while (start < s.text.size() && (static_cast<unsigned char>(s.text[start]) & 0xC0) == 0x80) ++start;
  const auto* bytes = reinterpret_cast<PCRE2_SPTR>(s.text.empty() ? "" : s.text.data());
  int rc = pcre2_match(re.code, bytes, s.text.size(), start, PCRE2_NO_UTF_CHECK, data, tls.match_context());
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
    rc = pcre2_match(re.code, bytes, s.text.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data,
                     tls.match_context());
  return rc;
}

}  // namespace

std::optional<std::string_view> js_match::group(std::string_view text, std::size_t k) const {
  if (k == 0) return whole.in(text);
  if (k > groups.size() || !groups[k - 1]) return std::nullopt;
  return groups[k - 1]->in(text);
}

result<js_regex> js_regex::compile(std::string_view source, std::string_view flags) {
  const std::string where = "js regex /" + std::string(source) + "/" + std::string(flags) + ": ";
  auto parsed_flags = parse_flags(flags);
  if (!parsed_flags) return status(errc::invalid_argument, where + parsed_flags.error().message());
  if (!is_valid_utf8(source)) return status(errc::invalid_argument, where + "the source is not valid UTF-8");
  auto pattern = translator(source, *parsed_flags).run();
  if (!pattern) return status(errc::invalid_argument, where + pattern.error().message());

  // Always UTF (the subject is code points), never UCP: UCP would make \d \w \b Unicode-aware,
  // which JavaScript's are not, even with u.
  std::uint32_t options = PCRE2_UTF | PCRE2_MATCH_UNSET_BACKREF | PCRE2_NEVER_BACKSLASH_C;
  if (parsed_flags->i) options |= PCRE2_CASELESS;
  // PCRE2 10.42 takes the first character of a leading lookahead as the match's first character
  // and then looks for the required character after it: /(?=s)x?s/ misses "s". Its start-of-match
  // optimizations are off for a pattern with a lookahead.
  if (pattern->find("(?=") != std::string::npos) options |= PCRE2_NO_START_OPTIMIZE;
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern->data()), pattern->size(), options,
                                   &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return status(errc::invalid_argument, where + reinterpret_cast<const char*>(message) +
                                              " (PCRE2 pattern \"" + *pattern + "\", offset " +
                                              std::to_string(error_offset) + ")");
  }
  auto p = std::make_shared<impl>();
  p->code = code;
  std::uint32_t groups = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &groups);
  p->groups = groups;
  p->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  p->source = std::string(source);
  p->flags = std::string(flags);
  p->pattern = std::move(*pattern);
  return js_regex(std::move(p));
}

js_regex js_regex::literal(std::string_view source, std::string_view flags) {
  auto compiled = compile(source, flags);
  if (!compiled) std::abort();
  return std::move(*compiled);
}

bool js_regex::search(std::string_view text, std::size_t from) const {
  if (from > text.size()) return false;
  const subject s(text);
  return run_match(*impl_, s, from) > 0;
}

std::optional<js_match> js_regex::find(std::string_view text, std::size_t from) const {
  if (from > text.size()) return std::nullopt;
  const subject s(text);
  const int rc = run_match(*impl_, s, from);
  if (rc <= 0) return std::nullopt;
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(tls.data);
  js_match m;
  m.whole = {s.to_original(ov[0]), s.to_original(ov[1])};
  m.groups.resize(impl_->groups);
  for (std::size_t k = 1; k <= impl_->groups && k < static_cast<std::size_t>(rc); ++k) {
    if (ov[2 * k] == PCRE2_UNSET) continue;
    m.groups[k - 1] = js_span{s.to_original(ov[2 * k]), s.to_original(ov[2 * k + 1])};
  }
  return m;
}

std::size_t js_regex::group_count() const { return impl_->groups; }
const std::string& js_regex::source() const { return impl_->source; }
const std::string& js_regex::flags() const { return impl_->flags; }
const std::string& js_regex::pcre2_pattern() const { return impl_->pattern; }
bool js_regex::jit() const { return impl_->jit; }

}  // namespace sessionrt
