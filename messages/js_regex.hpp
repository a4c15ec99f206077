// js_regex: a JavaScript RegExp (source + flags, as written in OpenClaw's / pi-ai's JS) run by
// PCRE2, so rules ported from JavaScript keep their regexes verbatim. Pure: no I/O, no state
// besides a per-thread PCRE2 match buffer; a compiled js_regex is immutable and can be shared
// by any number of threads. Offsets are byte offsets into the UTF-8 subject.
//
// The source is translated to a PCRE2 pattern that means what V8 means by it (Node 20):
// - flags: i (case-insensitive), m (^ $ at line terminators), s (. matches everything),
//   u (\p{..}, \u{..}, Unicode case folding); nothing else (g/y are about lastIndex state,
//   which a stateless search has no use for). The subject is always matched as code points.
// - \s \S are JavaScript's white space + line terminators (U+00A0, U+FEFF, U+2028, ..., not
//   U+0085); \d \w \b are ASCII (with i+u, \w and \b also take U+017F and U+212A, as V8's do);
//   `.` stops at \n \r U+2028 U+2029 unless s; ^ and $ are the input's ends (no "$ before a
//   final newline"), with m also at those four line terminators; \v is U+000B; [] matches
//   nothing and [^] anything; `[` inside a class is literal; a backreference to a group that
//   has not matched matches the empty string; without u, i keeps ASCII and non-ASCII apart
//   (U+017F does not match s, U+212A not k) as V8's non-Unicode case folding does; a {n,m}
//   that is no quantifier is literal.
// - \p{..} (with u): general categories (P, Lu, Letter, gc=Lu, General_Category=Letter), scripts
//   (Script=Greek, sc=Grek, Script_Extensions=, scx=) and the binary properties PCRE2 knows.
//
// What differs from V8 (documented limits, not bugs of a caller):
// - lookbehind must have a bounded length per alternative (PCRE2 10.42): `(?<=a+)` is a
//   compile error, where V8 accepts any lookbehind;
// - the Unicode tables are PCRE2's (10.42: Unicode 14), V8's are newer (Node 20: Unicode 17),
//   so \p{..} and case folding do not know characters assigned after Unicode 14;
// - without u, V8 works on UTF-16 code units (`.` matches half of an astral character); here
//   always on code points; captures inside a repeated group keep their last value instead of
//   being reset per iteration; regexp modifiers `(?i:..)` are rejected;
// - i without u is V8's for ASCII letters in the pattern (and U+017F, U+212A); a non-ASCII
//   letter of the pattern, and a backreference, are compared by Unicode case folding (ß
//   matches ẞ, which V8 without u does not);
// - syntax errors are V8's only as far as PCRE2 shares them: the translation is lenient (what
//   only u forbids, such as [\d-z] or \-, is accepted as without u);
// - a subject that is not valid UTF-8 is matched as if every invalid byte were U+FFFD (which
//   then matches [^a], \S, . and so on); offsets still refer to the original bytes;
// - a match that exceeds PCRE2's backtracking limits counts as no match.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt {

struct js_span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  std::string_view in(std::string_view text) const { return text.substr(begin, end - begin); }
};

// RegExp.prototype.exec's answer: the match and its capture groups.
struct js_match {
  js_span whole;
  std::vector<std::optional<js_span>> groups;  // groups[k - 1] is group k; nullopt: undefined

  // The text of group k (0: the whole match); nullopt when it did not participate.
  std::optional<std::string_view> group(std::string_view text, std::size_t k) const;
};

class js_regex {
 public:
  // `flags` is a string of i, m, s, u. An invalid_argument error names the pattern and what is
  // wrong with it ("js regex /a(/: missing closing parenthesis at offset 2").
  static result<js_regex> compile(std::string_view source, std::string_view flags = {});
  // For a pattern fixed in the source code: compiles, or aborts the program (a bug the tests
  // catch on first use).
  static js_regex literal(std::string_view source, std::string_view flags = {});

  // RegExp.prototype.test from byte offset `from` (lookbehind still sees what is before it). A
  // `from` inside a UTF-8 sequence starts at the next character; past the end: no match.
  bool search(std::string_view text, std::size_t from = 0) const;
  // RegExp.prototype.exec from `from`: the leftmost match.
  std::optional<js_match> find(std::string_view text, std::size_t from = 0) const;

  std::size_t group_count() const;
  const std::string& source() const;
  const std::string& flags() const;
  const std::string& pcre2_pattern() const;  // the translation, for diagnostics
  bool jit() const;                          // PCRE2's JIT compiled it

  struct impl;

 private:
  explicit js_regex(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}
  std::shared_ptr<const impl> impl_;
};

}  // namespace sessionrt
