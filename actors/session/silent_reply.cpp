#include "actors/session/silent_reply.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <vector>

#include "messages/json_reader.hpp"

// Regexes matched (openclaw 2026.9.6, dist/tokens-BTKQYTUd.mjs = src/auto-reply/tokens.ts):
//   exact       /^\s*NO_REPLY(?:\s+NO_REPLY)*\s*$/i
//   edge punct  /^\p{P}+/u and /$(?<=(\p{P}+))/u
//   trailing    /$(?<=((?:^|\s+|\*+)NO_REPLY(?:\s+NO_REPLY)*\s*))/i
//   leading     /^\s*NO_REPLY((?:\s*NO_REPLY)*)(\s*)/i
//   attached    /^\s*(?:NO_REPLY\s+)*NO_REPLY(?=[\p{L}\p{N}])/iu
//   final token /(?:^|[\s*.])NO_REPLY\s*$/i
//   reasoning   taggedReasoningPrefixRe, openReasoningPrefixRe, plainReasoningPrefixRe,
//               silentIntentTextRe, substantiveAnswerCueRe, bareReasoningPlaceholderRe
// Each is hand-matched below (std::regex has no lookbehind, no \p{..}, and recurses per
// character); the comments at each matcher say which regex it implements.

namespace sessionrt::actors {
namespace {

constexpr std::string_view token = silent_reply_token;
constexpr std::size_t token_size = token.size();
constexpr std::size_t npos = std::string_view::npos;

// ---------------------------------------------------------------- characters (UTF-8)

struct code_point_range {
  char32_t first;
  char32_t last;
};
bool is_punctuation(char32_t cp);       // \p{P}: Pc Pd Ps Pe Pi Pf Po (tables at the end)
bool is_letter_or_number(char32_t cp);  // [\p{L}\p{N}]

constexpr char32_t replacement_char = 0xFFFD;  // what an invalid byte decodes to (So)

struct decoded {
  char32_t cp;
  std::size_t len;
};

bool is_continuation(std::string_view s, std::size_t i) {
  return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
}

// The code point starting at s[i]; an invalid or truncated sequence is one byte of U+FFFD.
decoded decode_at(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1};
  const auto bits = [&](std::size_t k) { return static_cast<char32_t>(s[i + k] & 0x3F); };
  if (b0 >= 0xC2 && b0 < 0xE0 && is_continuation(s, i + 1))
    return {(char32_t(b0 & 0x1F) << 6) | bits(1), 2};
  if (b0 >= 0xE0 && b0 < 0xF0 && is_continuation(s, i + 1) && is_continuation(s, i + 2)) {
    const char32_t cp = (char32_t(b0 & 0x0F) << 12) | (bits(1) << 6) | bits(2);
    if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return {cp, 3};
  }
  if (b0 >= 0xF0 && b0 < 0xF5 && is_continuation(s, i + 1) && is_continuation(s, i + 2) &&
      is_continuation(s, i + 3)) {
    const char32_t cp = (char32_t(b0 & 0x07) << 18) | (bits(1) << 12) | (bits(2) << 6) | bits(3);
    if (cp >= 0x10000 && cp <= 0x10FFFF) return {cp, 4};
  }
  return {replacement_char, 1};
}

// The code point that ends at s[end - 1] (end > 0).
decoded decode_before(std::string_view s, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && end - start < 4 && is_continuation(s, start)) --start;
  const decoded d = decode_at(s, start);
  if (start + d.len == end) return d;
  return {replacement_char, 1};
}

// JavaScript \s and String.prototype.trim: WhiteSpace + LineTerminator.
bool is_js_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

std::size_t skip_space(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    const decoded d = decode_at(s, i);
    if (!is_js_space(d.cp)) break;
    i += d.len;
  }
  return i;
}

std::size_t skip_space_back(std::string_view s, std::size_t end) {
  while (end > 0) {
    const decoded d = decode_before(s, end);
    if (!is_js_space(d.cp)) break;
    end -= d.len;
  }
  return end;
}

std::string_view trim_start(std::string_view s) { return s.substr(skip_space(s, 0)); }
std::string_view trim_end(std::string_view s) { return s.substr(0, skip_space_back(s, s.size())); }
std::string_view trim(std::string_view s) { return trim_end(trim_start(s)); }

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// \w of a non-unicode JavaScript regex: [A-Za-z0-9_].
bool is_word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// ASCII case-insensitive `word` at s[i] (the /i flag on ASCII patterns).
bool iequals_at(std::string_view s, std::size_t i, std::string_view word) {
  if (i > s.size() || s.size() - i < word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    if (lower_ascii(s[i + k]) != lower_ascii(word[k])) return false;
  }
  return true;
}

bool token_at(std::string_view s, std::size_t i) { return iequals_at(s, i, token); }

bool icontains_token(std::string_view s) {
  for (std::size_t i = 0; i + token_size <= s.size(); ++i) {
    if (token_at(s, i)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- whole-payload token

// /^\s*NO_REPLY(?:\s+NO_REPLY)*\s*$/i
bool matches_exact_silent(std::string_view s) {
  std::size_t i = skip_space(s, 0);
  if (!token_at(s, i)) return false;
  for (i += token_size;;) {
    const std::size_t next = skip_space(s, i);
    if (next == s.size()) return true;
    if (next == i || !token_at(s, next)) return false;
    i = next + token_size;
  }
}

// text.slice(leading \p{P}+ length, length - trailing \p{P}+ length); "" when they overlap.
std::string_view strip_edge_punctuation(std::string_view s) {
  std::size_t start = 0;
  while (start < s.size()) {
    const decoded d = decode_at(s, start);
    if (!is_punctuation(d.cp)) break;
    start += d.len;
  }
  std::size_t end = s.size();
  while (end > 0) {
    const decoded d = decode_before(s, end);
    if (!is_punctuation(d.cp)) break;
    end -= d.len;
  }
  return end <= start ? std::string_view{} : s.substr(start, end - start);
}

// ---------------------------------------------------------------- JSON forms

std::string_view as_view(const boost::json::string& s) { return {s.data(), s.size()}; }

// A JSON string literal whose value, trimmed, is exactly the token.
bool is_silent_json_string(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty() || t.front() != '"' || t.back() != '"' || t.find(token) == npos) return false;
  const auto parsed = json::parse(t);
  return parsed.ok() && parsed->is_string() && trim(as_view(parsed->as_string())) == token;
}

// {"action":"NO_REPLY"}: an object with exactly the one key "action", a string, trimmed.
bool is_silent_envelope(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty() || t.front() != '{' || t.back() != '}' || t.find(token) == npos) return false;
  const auto parsed = json::parse(t);
  if (!parsed.ok() || !parsed->is_object()) return false;
  const auto& obj = parsed->as_object();
  if (obj.size() != 1 || obj.begin()->key() != "action") return false;
  const auto& action = obj.begin()->value();
  return action.is_string() && trim(as_view(action.as_string())) == token;
}

// ---------------------------------------------------------------- reasoning prefixes

// (?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking), longest spelling first.
constexpr std::array<std::string_view, 10> reasoning_tag_names = {
    "antml:thinking", "antml:think", "antml:thought", "mm:thinking", "mm:think",
    "mm:thought",     "thinking",    "think",         "thought",     "antthinking"};

// openReasoningPrefixRe from s[i]: /\s*<\s*NAME\b[^<>]*>/i; returns the end of the match.
std::optional<std::size_t> match_open_reasoning_tag(std::string_view s, std::size_t i) {
  i = skip_space(s, i);
  if (i >= s.size() || s[i] != '<') return std::nullopt;
  i = skip_space(s, i + 1);
  const bool named = std::any_of(reasoning_tag_names.begin(), reasoning_tag_names.end(),
                                 [&](std::string_view name) {
                                   const std::size_t end = i + name.size();
                                   return iequals_at(s, i, name) &&
                                          (end == s.size() || !is_word_byte(s[end]));
                                 });
  if (!named) return std::nullopt;
  const std::size_t bracket = s.find_first_of("<>", i);
  if (bracket == npos || s[bracket] != '>') return std::nullopt;
  return bracket + 1;
}

// /<\s*\/\s*NAME\s*>/i at s[i]; returns the end of the match.
std::optional<std::size_t> match_close_reasoning_tag(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] != '<') return std::nullopt;
  i = skip_space(s, i + 1);
  if (i >= s.size() || s[i] != '/') return std::nullopt;
  i = skip_space(s, i + 1);
  for (const auto name : reasoning_tag_names) {
    if (!iequals_at(s, i, name)) continue;
    const std::size_t end = skip_space(s, i + name.size());
    if (end < s.size() && s[end] == '>') return end + 1;
  }
  return std::nullopt;
}

// taggedReasoningPrefixRe: open tag, the shortest run up to a close tag, trailing \s*.
std::optional<std::size_t> match_tagged_reasoning_block(std::string_view s) {
  const auto open_end = match_open_reasoning_tag(s, 0);
  if (!open_end) return std::nullopt;
  for (std::size_t p = s.find('<', *open_end); p != npos; p = s.find('<', p + 1)) {
    if (const auto close_end = match_close_reasoning_tag(s, p)) return skip_space(s, *close_end);
  }
  return std::nullopt;
}

std::string_view strip_leading_reasoning_blocks(std::string_view s) {
  while (const auto end = match_tagged_reasoning_block(s)) s = s.substr(*end);
  return s;
}

// The position after the last '\n' in s[from, to), if any.
std::optional<std::size_t> after_last_newline(std::string_view s, std::size_t from,
                                              std::size_t to) {
  const std::size_t nl = s.substr(from, to - from).rfind('\n');
  if (nl == npos) return std::nullopt;
  return from + nl + 1;
}

// plainReasoningPrefixRe /^\s*(?:think(?:ing)?|thought|analysis|reasoning)\s*:?\s*\r?\n/i.
// The greedy \s* runs backtrack to the last line break after the colon, or, failing
// that, to the last one before it.
std::optional<std::size_t> match_plain_reasoning_prefix(std::string_view s) {
  constexpr std::array<std::string_view, 5> names = {"thinking", "think", "thought", "analysis",
                                                     "reasoning"};
  const std::size_t i = skip_space(s, 0);
  for (const auto name : names) {
    if (!iequals_at(s, i, name)) continue;
    const std::size_t name_end = i + name.size();
    const std::size_t space_end = skip_space(s, name_end);
    if (space_end < s.size() && s[space_end] == ':') {
      const std::size_t after_colon = skip_space(s, space_end + 1);
      if (const auto end = after_last_newline(s, space_end + 1, after_colon)) return end;
    }
    if (const auto end = after_last_newline(s, name_end, space_end)) return end;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- word grammars
// silentIntentTextRe and bareReasoningPlaceholderRe are sequences of literal words joined
// by \s+ with optional groups, anchored at both ends; they are matched word by word.

using phrase = std::vector<std::string_view>;
struct slot {
  std::vector<phrase> options;
  bool optional = false;
};
using grammar = std::vector<slot>;

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  for (std::size_t i = skip_space(s, 0); i < s.size();) {
    std::size_t end = i;
    while (end < s.size() && !is_js_space(decode_at(s, end).cp)) end += decode_at(s, end).len;
    words.push_back(s.substr(i, end - i));
    i = skip_space(s, end);
  }
  return words;
}

bool phrase_at(std::span<const std::string_view> words, std::size_t w, const phrase& p) {
  if (words.size() - w < p.size()) return false;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (words[w + k].size() != p[k].size() || !iequals_at(words[w + k], 0, p[k])) return false;
  }
  return true;
}

bool match_slots(std::span<const std::string_view> words, std::size_t w, const grammar& g,
                 std::size_t slot_index) {
  if (slot_index == g.size()) return w == words.size();
  const slot& current = g[slot_index];
  for (const phrase& option : current.options) {
    if (phrase_at(words, w, option) && match_slots(words, w + option.size(), g, slot_index + 1))
      return true;
  }
  return current.optional && match_slots(words, w, g, slot_index + 1);
}

bool matches_any_grammar(std::span<const std::string_view> words,
                         std::span<const grammar> grammars) {
  return std::any_of(grammars.begin(), grammars.end(),
                     [&](const grammar& g) { return match_slots(words, 0, g, 0); });
}

const std::vector<grammar>& silent_intent_grammars() {
  static const slot subject{{{"i"}, {"i'll"}, {"i", "will"}, {"i'm"}, {"i", "am"}, {"we"},
                             {"we'll"}, {"we", "will"}, {"the", "assistant"}, {"assistant"},
                             {"the", "bot"}, {"bot"}, {"openclaw"}}};
  static const slot where{{{"here"}, {"for", "now"}, {"on", "this"}, {"in", "this", "chat"},
                           {"in", "this", "thread"}, {"in", "this", "channel"},
                           {"in", "this", "conversation"}},
                          true};
  static const std::vector<grammar> grammars = {
      // (?:will\s+)?(?:stay|remain|keep|be)\s+(?:quiet|silent)(WHERE)?
      {subject, {{{"will"}}, true}, {{{"stay"}, {"remain"}, {"keep"}, {"be"}}},
       {{{"quiet"}, {"silent"}}}, where},
      // (?:do not|don't|dont|will not|won't|would not|should not)\s+(?:reply|respond)(WHERE)?
      {subject,
       {{{"do", "not"}, {"don't"}, {"dont"}, {"will", "not"}, {"won't"}, {"would", "not"},
         {"should", "not"}}},
       {{{"reply"}, {"respond"}}}, where},
      // (?:have|has)\s+nothing\s+(?:to|for)\s+(?:say|add|reply|respond)
      {subject, {{{"have"}, {"has"}}}, {{{"nothing"}}}, {{{"to"}, {"for"}}},
       {{{"say"}, {"add"}, {"reply"}, {"respond"}}}},
  };
  return grammars;
}

// silentIntentTextRe: SUBJECT \s+ BODY, then [.!?]+ glued to the last word, then \s*.
bool is_silent_intent_text(std::string_view text) {
  std::string_view t = trim(text);
  std::size_t end = t.size();
  while (end > 0 && (t[end - 1] == '.' || t[end - 1] == '!' || t[end - 1] == '?')) --end;
  if (end < t.size() && (end == 0 || is_js_space(decode_before(t, end).cp))) return false;
  const auto words = split_words(t.substr(0, end));
  return matches_any_grammar(words, silent_intent_grammars());
}

// bareReasoningPlaceholderRe: [internal|private] (reasoning|thinking|thoughts?|analysis)
// [notes?], alone.
bool is_bare_reasoning_placeholder(std::string_view text) {
  static const std::vector<grammar> grammars = {{
      {{{"internal"}, {"private"}}, true},
      {{{"reasoning"}, {"thinking"}, {"thought"}, {"thoughts"}, {"analysis"}}},
      {{{"note"}, {"notes"}}, true},
  }};
  const auto words = split_words(text);
  return matches_any_grammar(words, grammars);
}

// substantiveAnswerCueRe /\b(?:answer|here(?:'s|\s+is)|tell\s+them|you\s+(?:should|can|
// could|need|must)|please|try|use|send|service\s+is|resolved|retry|yes|no,|sure)\b/i, a
// search; a space in a cue stands for \s+.
bool has_substantive_answer_cue(std::string_view s) {
  constexpr std::array<std::string_view, 19> cues = {
      "answer", "here's",  "here is", "tell them", "you should", "you can", "you could",
      "you need", "you must", "please", "try", "use", "send", "service is", "resolved",
      "retry", "yes", "no,", "sure"};
  const auto match_cue = [&](std::size_t i, std::string_view cue) -> std::optional<std::size_t> {
    for (const char c : cue) {
      if (c == ' ') {
        const std::size_t next = skip_space(s, i);
        if (next == i) return std::nullopt;
        i = next;
      } else if (i < s.size() && lower_ascii(s[i]) == c) {
        ++i;
      } else {
        return std::nullopt;
      }
    }
    return i;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && is_word_byte(s[i - 1])) continue;  // \b before a word character
    for (const auto cue : cues) {
      const auto end = match_cue(i, cue);
      if (!end) continue;
      const bool next_is_word = *end < s.size() && is_word_byte(s[*end]);
      if (is_word_byte(s[*end - 1]) != next_is_word) return true;  // \b after
    }
  }
  return false;
}

// stripFinalSilentToken: text.replace(/(?:^|[\s*.])NO_REPLY\s*$/i, "").trim(), or nullopt
// when nothing was removed.
std::optional<std::string> strip_final_silent_token(std::string_view s) {
  const std::size_t end = skip_space_back(s, s.size());
  if (end < token_size || !token_at(s, end - token_size)) return std::nullopt;
  const std::size_t token_start = end - token_size;
  std::size_t cut = 0;
  if (token_start > 0) {
    const decoded before = decode_before(s, token_start);
    if (!is_js_space(before.cp) && before.cp != '*' && before.cp != '.') return std::nullopt;
    cut = token_start - before.len;
  }
  return std::string(trim(s.substr(0, cut)));
}

bool has_silent_intent_final_token(std::string_view s) {
  const auto without = strip_final_silent_token(s);
  return without && (without->empty() || is_silent_intent_text(*without));
}

std::vector<std::string_view> nonblank_trimmed_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= s.size();) {
    std::size_t nl = s.find('\n', start);
    if (nl == npos) nl = s.size();
    const std::string_view line = trim(s.substr(start, nl - start));
    if (!line.empty()) lines.push_back(line);
    start = nl + 1;
  }
  return lines;
}

bool has_plain_reasoning_final_token(std::string_view s) {
  const auto without = strip_final_silent_token(s);
  if (!without) return false;
  if (without->empty() || is_silent_intent_text(*without)) return true;
  const auto lines = nonblank_trimmed_lines(*without);
  std::string previous;
  for (std::size_t k = 0; k + 1 < lines.size(); ++k) {
    if (k > 0) previous += '\n';
    previous += lines[k];
  }
  const bool intent_after_reasoning = !lines.empty() && is_silent_intent_text(lines.back()) &&
                                      !previous.empty() && !has_substantive_answer_cue(previous);
  return intent_after_reasoning || is_bare_reasoning_placeholder(*without);
}

// isReasoningPrefixedSilentReplyText.
bool is_reasoning_prefixed_silent(std::string_view text) {
  const std::string_view t = trim(text);
  if (t.empty()) return false;
  const std::string_view without_blocks = strip_leading_reasoning_blocks(t);
  if (without_blocks.size() != t.size())
    return is_silent_reply_text(without_blocks) || has_silent_intent_final_token(without_blocks);
  if (const auto end = match_open_reasoning_tag(t, 0)) {
    const std::string_view rest = t.substr(*end);
    return is_silent_reply_text(rest) || has_plain_reasoning_final_token(rest);
  }
  if (const auto end = match_plain_reasoning_prefix(t)) {
    const std::string_view rest = t.substr(*end);
    return is_silent_reply_text(rest) || has_plain_reasoning_final_token(rest);
  }
  return false;
}

// ---------------------------------------------------------------- leading / trailing tokens

// /$(?<=((?:^|\s+|\*+)NO_REPLY(?:\s+NO_REPLY)*\s*))/i: where the captured tail starts, or
// npos. The lookbehind runs right to left: trailing \s*, the chain of tokens separated by
// whitespace, then the leftmost token that has ^, a whitespace run or a '*' run before it.
std::size_t trailing_silent_cut(std::string_view s) {
  const std::size_t end = skip_space_back(s, s.size());
  if (end < token_size || !token_at(s, end - token_size)) return npos;
  std::size_t leftmost = end - token_size;
  std::size_t second = npos;  // the token right of `leftmost` in the chain
  for (;;) {
    const std::size_t space = skip_space_back(s, leftmost);
    if (space == leftmost || space < token_size || !token_at(s, space - token_size)) break;
    second = leftmost;
    leftmost = space - token_size;
  }
  if (leftmost == 0) return 0;
  const std::size_t space = skip_space_back(s, leftmost);
  if (space < leftmost) return space;
  if (s[leftmost - 1] == '*') {
    std::size_t stars = leftmost;
    while (stars > 0 && s[stars - 1] == '*') --stars;
    return stars;
  }
  return second == npos ? npos : leftmost + token_size;
}

struct leading_tokens {
  std::size_t tokens_end;  // end of the last token
  std::size_t end;         // end of the whitespace after it (group 2)
};

// /^\s*NO_REPLY((?:\s*NO_REPLY)*)(\s*)/i
std::optional<leading_tokens> match_leading_tokens(std::string_view s) {
  std::size_t i = skip_space(s, 0);
  if (!token_at(s, i)) return std::nullopt;
  i += token_size;
  for (std::size_t next = skip_space(s, i); token_at(s, next); next = skip_space(s, i))
    i = next + token_size;
  return leading_tokens{i, skip_space(s, i)};
}

// /^\s*(?:NO_REPLY\s+)*NO_REPLY(?=[\p{L}\p{N}])/iu
bool starts_with_attached_token(std::string_view s) {
  for (std::size_t i = skip_space(s, 0); token_at(s, i);) {
    const std::size_t after = i + token_size;
    if (after == s.size()) return false;
    if (is_letter_or_number(decode_at(s, after).cp)) return true;
    i = skip_space(s, after);
    if (i == after) return false;
  }
  return false;
}

// ---------------------------------------------------------------- streaming helpers

// A case-insensitive proper prefix of the token that is worth holding: upper case (so "N",
// "NO", "NO_RE"), or containing '_' (so "no_re"); "No"/"no" are ordinary words.
bool is_plausible_token_prefix(std::string_view s) {
  if (s.empty() || s.size() >= token_size || !iequals_at(token, 0, s)) return false;
  const bool upper = std::none_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  return upper || s.find('_') != npos;
}

// The reply so far could still become a silent reply: blank, is_silent_reply_text,
// is_silent_reply_prefix_text, or \s* \p{P}* \s* (NO_REPLY \s+)* then a plausible prefix.
bool could_become_silent(std::string_view s) {
  if (trim_start(s).empty() || is_silent_reply_text(s) || is_silent_reply_prefix_text(s))
    return true;
  std::size_t i = skip_space(s, 0);
  while (i < s.size() && is_punctuation(decode_at(s, i).cp)) i += decode_at(s, i).len;
  i = skip_space(s, i);
  if (i == s.size()) return true;  // only whitespace and punctuation ("**", "«") so far
  while (token_at(s, i)) {
    const std::size_t after = i + token_size;
    i = skip_space(s, after);
    if (i == s.size()) return true;
    if (i == after) return false;
  }
  return is_plausible_token_prefix(s.substr(i));
}

// The reply so far ends inside a UTF-8 sequence (a chunk boundary split a character).
bool ends_mid_character(std::string_view s) {
  for (std::size_t k = 1; k <= std::min<std::size_t>(3, s.size()); ++k) {
    const auto b = static_cast<unsigned char>(s[s.size() - k]);
    if ((b & 0xC0) == 0x80) continue;
    const std::size_t needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return needed > k;
  }
  return false;
}

struct tail_check {
  bool could_be_trailing_token;
  std::size_t mismatch;  // when not: no candidate starts before this position
};

// Could s[i..] still grow into what strip_silent_token removes at the end of a reply:
// \s* \** then a case-insensitive prefix of NO_REPLY(\s+NO_REPLY)*\s* — with whitespace or
// '*' before the token, or at the very start of the deliverable text (`at_start`)?
tail_check check_trailing_candidate(std::string_view s, std::size_t i, bool at_start) {
  const std::size_t after_space = skip_space(s, i);
  std::size_t p = after_space;
  while (p < s.size() && s[p] == '*') ++p;
  if (p == s.size()) return {true, 0};
  if (p == i && !at_start) return {false, i};
  for (;;) {
    const std::size_t n = std::min(token_size, s.size() - p);
    for (std::size_t q = 0; q < n; ++q) {
      if (lower_ascii(s[p + q]) != lower_ascii(token[q])) return {false, p + q};
    }
    if (n < token_size) return {true, 0};
    const std::size_t after = p + token_size;
    p = skip_space(s, after);
    if (p == s.size()) return {true, 0};
    if (p == after) return {false, p};
  }
}

}  // namespace

// ---------------------------------------------------------------- public API

bool is_silent_reply_text(std::string_view text) {
  if (text.empty()) return false;
  return matches_exact_silent(text) || matches_exact_silent(strip_edge_punctuation(trim(text)));
}

bool is_silent_reply_payload_text(std::string_view text) {
  return is_silent_reply_text(text) || is_silent_json_string(text) || is_silent_envelope(text) ||
         is_reasoning_prefixed_silent(text);
}

std::string strip_silent_token(std::string_view text) {
  const std::size_t cut = trailing_silent_cut(text);
  return std::string(trim(cut == npos ? text : text.substr(0, cut)));
}

std::string strip_leading_silent_token(std::string_view text) {
  const auto leading = match_leading_tokens(text);
  return std::string(trim(leading ? text.substr(leading->end) : text));
}

bool starts_with_silent_token(std::string_view text) {
  if (text.empty()) return false;
  if (starts_with_attached_token(text)) return true;
  const auto leading = match_leading_tokens(text);
  if (!leading) return false;
  const std::string_view gap = text.substr(leading->tokens_end, leading->end - leading->tokens_end);
  return gap.find_first_of("\r\n") != npos && leading->end < text.size();
}

bool is_silent_reply_prefix_text(std::string_view text) {
  const std::string_view t = trim_start(text);
  if (t.size() < 2 || t.size() > token_size || !token.starts_with(t)) return false;
  return t.find('_') != npos || t == token || t == "NO";
}

silent_reply_verdict final_reply_verdict(std::string_view text) {
  if (is_silent_reply_payload_text(text)) return {true, {}};
  std::string t(text);
  const bool leading = starts_with_silent_token(t);
  if (leading) t = strip_leading_silent_token(t);
  bool stripped = leading;
  if (leading || icontains_token(t)) {
    std::string after = strip_silent_token(t);
    stripped = stripped || after != trim(t);
    t = std::move(after);
  } else {
    t = std::string(trim(t));
  }
  if (t.empty()) return {stripped, {}};
  return {false, std::move(t)};
}

std::string silent_reply_filter::feed(std::string_view chunk) {
  if (finished_) return {};
  all_.append(chunk);
  if (ends_mid_character(all_)) return {};  // decide once the character is complete
  if (body_start_ == npos) {
    if (could_become_silent(all_)) return {};
    const auto leading = starts_with_silent_token(all_) ? match_leading_tokens(all_) : std::nullopt;
    body_start_ = leading ? leading->end : skip_space(all_, 0);
    released_end_ = body_start_;
  }
  std::size_t i = released_end_;
  while (i < all_.size()) {
    const tail_check c = check_trailing_candidate(all_, i, !released_any_ && i == body_start_);
    if (c.could_be_trailing_token) break;
    i = std::max(c.mismatch, i + decode_at(all_, i).len);
  }
  return release_up_to(std::min(i, all_.size()));
}

std::string silent_reply_filter::release_up_to(std::size_t end) {
  if (end <= released_end_) return {};
  std::string out = all_.substr(released_end_, end - released_end_);
  released_end_ = end;
  released_any_ = true;
  return out;
}

silent_reply_verdict silent_reply_filter::finish() {
  if (finished_) return {};
  finished_ = true;
  if (!released_any_) return final_reply_verdict(all_);
  if (is_silent_reply_payload_text(all_)) return {true, {}};
  const std::string_view body = std::string_view(all_).substr(body_start_);
  const std::size_t released = released_end_ - body_start_;
  std::size_t end = trailing_silent_cut(body);
  if (end == npos || end < released) end = body.size();
  return {false, std::string(trim_end(body.substr(released, end - released)))};
}

// ---------------------------------------------------------------- Unicode tables
// Generated from the JavaScript engine OpenClaw runs on (Node v20.20.2, ICU 78.2,
// process.versions.unicode "17.0"), all planes, by testing each code point:
//   for (cp = 0; cp < 0x110000; cp++) if (cp < 0xD800 || cp > 0xDFFF)
//     /^\p{P}$/u.test(String.fromCodePoint(cp))          -> punctuation_ranges
//     /^[\p{L}\p{N}]$/u.test(String.fromCodePoint(cp))   -> letter_or_number_ranges
// and printing maximal runs. \p{P} is the union of Pc Pd Ps Pe Pi Pf Po (199 ranges, 134 of
// them in the BMP); the same JavaScript regexes see the same classes, so the ports agree.

namespace {

constexpr code_point_range punctuation_ranges[] = {
    {0x0021, 0x0023}, {0x0025, 0x002A}, {0x002C, 0x002F}, {0x003A, 0x003B}, {0x003F, 0x0040},
    {0x005B, 0x005D}, {0x005F, 0x005F}, {0x007B, 0x007B}, {0x007D, 0x007D}, {0x00A1, 0x00A1},
    {0x00A7, 0x00A7}, {0x00AB, 0x00AB}, {0x00B6, 0x00B7}, {0x00BB, 0x00BB}, {0x00BF, 0x00BF},
    {0x037E, 0x037E}, {0x0387, 0x0387}, {0x055A, 0x055F}, {0x0589, 0x058A}, {0x05BE, 0x05BE},
    {0x05C0, 0x05C0}, {0x05C3, 0x05C3}, {0x05C6, 0x05C6}, {0x05F3, 0x05F4}, {0x0609, 0x060A},
    {0x060C, 0x060D}, {0x061B, 0x061B}, {0x061D, 0x061F}, {0x066A, 0x066D}, {0x06D4, 0x06D4},
    {0x0700, 0x070D}, {0x07F7, 0x07F9}, {0x0830, 0x083E}, {0x085E, 0x085E}, {0x0964, 0x0965},
    {0x0970, 0x0970}, {0x09FD, 0x09FD}, {0x0A76, 0x0A76}, {0x0AF0, 0x0AF0}, {0x0C77, 0x0C77},
    {0x0C84, 0x0C84}, {0x0DF4, 0x0DF4}, {0x0E4F, 0x0E4F}, {0x0E5A, 0x0E5B}, {0x0F04, 0x0F12},
    {0x0F14, 0x0F14}, {0x0F3A, 0x0F3D}, {0x0F85, 0x0F85}, {0x0FD0, 0x0FD4}, {0x0FD9, 0x0FDA},
    {0x104A, 0x104F}, {0x10FB, 0x10FB}, {0x1360, 0x1368}, {0x1400, 0x1400}, {0x166E, 0x166E},
    {0x169B, 0x169C}, {0x16EB, 0x16ED}, {0x1735, 0x1736}, {0x17D4, 0x17D6}, {0x17D8, 0x17DA},
    {0x1800, 0x180A}, {0x1944, 0x1945}, {0x1A1E, 0x1A1F}, {0x1AA0, 0x1AA6}, {0x1AA8, 0x1AAD},
    {0x1B4E, 0x1B4F}, {0x1B5A, 0x1B60}, {0x1B7D, 0x1B7F}, {0x1BFC, 0x1BFF}, {0x1C3B, 0x1C3F},
    {0x1C7E, 0x1C7F}, {0x1CC0, 0x1CC7}, {0x1CD3, 0x1CD3}, {0x2010, 0x2027}, {0x2030, 0x2043},
    {0x2045, 0x2051}, {0x2053, 0x205E}, {0x207D, 0x207E}, {0x208D, 0x208E}, {0x2308, 0x230B},
    {0x2329, 0x232A}, {0x2768, 0x2775}, {0x27C5, 0x27C6}, {0x27E6, 0x27EF}, {0x2983, 0x2998},
    {0x29D8, 0x29DB}, {0x29FC, 0x29FD}, {0x2CF9, 0x2CFC}, {0x2CFE, 0x2CFF}, {0x2D70, 0x2D70},
    {0x2E00, 0x2E2E}, {0x2E30, 0x2E4F}, {0x2E52, 0x2E5D}, {0x3001, 0x3003}, {0x3008, 0x3011},
    {0x3014, 0x301F}, {0x3030, 0x3030}, {0x303D, 0x303D}, {0x30A0, 0x30A0}, {0x30FB, 0x30FB},
    {0xA4FE, 0xA4FF}, {0xA60D, 0xA60F}, {0xA673, 0xA673}, {0xA67E, 0xA67E}, {0xA6F2, 0xA6F7},
    {0xA874, 0xA877}, {0xA8CE, 0xA8CF}, {0xA8F8, 0xA8FA}, {0xA8FC, 0xA8FC}, {0xA92E, 0xA92F},
    {0xA95F, 0xA95F}, {0xA9C1, 0xA9CD}, {0xA9DE, 0xA9DF}, {0xAA5C, 0xAA5F}, {0xAADE, 0xAADF},
    {0xAAF0, 0xAAF1}, {0xABEB, 0xABEB}, {0xFD3E, 0xFD3F}, {0xFE10, 0xFE19}, {0xFE30, 0xFE52},
    {0xFE54, 0xFE61}, {0xFE63, 0xFE63}, {0xFE68, 0xFE68}, {0xFE6A, 0xFE6B}, {0xFF01, 0xFF03},
    {0xFF05, 0xFF0A}, {0xFF0C, 0xFF0F}, {0xFF1A, 0xFF1B}, {0xFF1F, 0xFF20}, {0xFF3B, 0xFF3D},
    {0xFF3F, 0xFF3F}, {0xFF5B, 0xFF5B}, {0xFF5D, 0xFF5D}, {0xFF5F, 0xFF65}, {0x10100, 0x10102},
    {0x1039F, 0x1039F}, {0x103D0, 0x103D0}, {0x1056F, 0x1056F}, {0x10857, 0x10857},
    {0x1091F, 0x1091F}, {0x1093F, 0x1093F}, {0x10A50, 0x10A58}, {0x10A7F, 0x10A7F},
    {0x10AF0, 0x10AF6}, {0x10B39, 0x10B3F}, {0x10B99, 0x10B9C}, {0x10D6E, 0x10D6E},
    {0x10EAD, 0x10EAD}, {0x10ED0, 0x10ED0}, {0x10F55, 0x10F59}, {0x10F86, 0x10F89},
    {0x11047, 0x1104D}, {0x110BB, 0x110BC}, {0x110BE, 0x110C1}, {0x11140, 0x11143},
    {0x11174, 0x11175}, {0x111C5, 0x111C8}, {0x111CD, 0x111CD}, {0x111DB, 0x111DB},
    {0x111DD, 0x111DF}, {0x11238, 0x1123D}, {0x112A9, 0x112A9}, {0x113D4, 0x113D5},
    {0x113D7, 0x113D8}, {0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145D},
    {0x114C6, 0x114C6}, {0x115C1, 0x115D7}, {0x11641, 0x11643}, {0x11660, 0x1166C},
    {0x116B9, 0x116B9}, {0x1173C, 0x1173E}, {0x1183B, 0x1183B}, {0x11944, 0x11946},
    {0x119E2, 0x119E2}, {0x11A3F, 0x11A46}, {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2},
    {0x11B00, 0x11B09}, {0x11BE1, 0x11BE1}, {0x11C41, 0x11C45}, {0x11C70, 0x11C71},
    {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF}, {0x12470, 0x12474},
    {0x12FF1, 0x12FF2}, {0x16A6E, 0x16A6F}, {0x16AF5, 0x16AF5}, {0x16B37, 0x16B3B},
    {0x16B44, 0x16B44}, {0x16D6D, 0x16D6F}, {0x16E97, 0x16E9A}, {0x16FE2, 0x16FE2},
    {0x1BC9F, 0x1BC9F}, {0x1DA87, 0x1DA8B}, {0x1E5FF, 0x1E5FF}, {0x1E95E, 0x1E95F},
};
constexpr code_point_range letter_or_number_ranges[] = {
    {0x0030, 0x0039}, {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00AA, 0x00AA}, {0x00B2, 0x00B3},
    {0x00B5, 0x00B5}, {0x00B9, 0x00BA}, {0x00BC, 0x00BE}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6},
    {0x00F8, 0x02C1}, {0x02C6, 0x02D1}, {0x02E0, 0x02E4}, {0x02EC, 0x02EC}, {0x02EE, 0x02EE},
    {0x0370, 0x0374}, {0x0376, 0x0377}, {0x037A, 0x037D}, {0x037F, 0x037F}, {0x0386, 0x0386},
    {0x0388, 0x038A}, {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5}, {0x03F7, 0x0481},
    {0x048A, 0x052F}, {0x0531, 0x0556}, {0x0559, 0x0559}, {0x0560, 0x0588}, {0x05D0, 0x05EA},
    {0x05EF, 0x05F2}, {0x0620, 0x064A}, {0x0660, 0x0669}, {0x066E, 0x066F}, {0x0671, 0x06D3},
    {0x06D5, 0x06D5}, {0x06E5, 0x06E6}, {0x06EE, 0x06FC}, {0x06FF, 0x06FF}, {0x0710, 0x0710},
    {0x0712, 0x072F}, {0x074D, 0x07A5}, {0x07B1, 0x07B1}, {0x07C0, 0x07EA}, {0x07F4, 0x07F5},
    {0x07FA, 0x07FA}, {0x0800, 0x0815}, {0x081A, 0x081A}, {0x0824, 0x0824}, {0x0828, 0x0828},
    {0x0840, 0x0858}, {0x0860, 0x086A}, {0x0870, 0x0887}, {0x0889, 0x088F}, {0x08A0, 0x08C9},
    {0x0904, 0x0939}, {0x093D, 0x093D}, {0x0950, 0x0950}, {0x0958, 0x0961}, {0x0966, 0x096F},
    {0x0971, 0x0980}, {0x0985, 0x098C}, {0x098F, 0x0990}, {0x0993, 0x09A8}, {0x09AA, 0x09B0},
    {0x09B2, 0x09B2}, {0x09B6, 0x09B9}, {0x09BD, 0x09BD}, {0x09CE, 0x09CE}, {0x09DC, 0x09DD},
    {0x09DF, 0x09E1}, {0x09E6, 0x09F1}, {0x09F4, 0x09F9}, {0x09FC, 0x09FC}, {0x0A05, 0x0A0A},
    {0x0A0F, 0x0A10}, {0x0A13, 0x0A28}, {0x0A2A, 0x0A30}, {0x0A32, 0x0A33}, {0x0A35, 0x0A36},
    {0x0A38, 0x0A39}, {0x0A59, 0x0A5C}, {0x0A5E, 0x0A5E}, {0x0A66, 0x0A6F}, {0x0A72, 0x0A74},
    {0x0A85, 0x0A8D}, {0x0A8F, 0x0A91}, {0x0A93, 0x0AA8}, {0x0AAA, 0x0AB0}, {0x0AB2, 0x0AB3},
    {0x0AB5, 0x0AB9}, {0x0ABD, 0x0ABD}, {0x0AD0, 0x0AD0}, {0x0AE0, 0x0AE1}, {0x0AE6, 0x0AEF},
    {0x0AF9, 0x0AF9}, {0x0B05, 0x0B0C}, {0x0B0F, 0x0B10}, {0x0B13, 0x0B28}, {0x0B2A, 0x0B30},
    {0x0B32, 0x0B33}, {0x0B35, 0x0B39}, {0x0B3D, 0x0B3D}, {0x0B5C, 0x0B5D}, {0x0B5F, 0x0B61},
    {0x0B66, 0x0B6F}, {0x0B71, 0x0B77}, {0x0B83, 0x0B83}, {0x0B85, 0x0B8A}, {0x0B8E, 0x0B90},
    {0x0B92, 0x0B95}, {0x0B99, 0x0B9A}, {0x0B9C, 0x0B9C}, {0x0B9E, 0x0B9F}, {0x0BA3, 0x0BA4},
    {0x0BA8, 0x0BAA}, {0x0BAE, 0x0BB9}, {0x0BD0, 0x0BD0}, {0x0BE6, 0x0BF2}, {0x0C05, 0x0C0C},
    {0x0C0E, 0x0C10}, {0x0C12, 0x0C28}, {0x0C2A, 0x0C39}, {0x0C3D, 0x0C3D}, {0x0C58, 0x0C5A},
    {0x0C5C, 0x0C5D}, {0x0C60, 0x0C61}, {0x0C66, 0x0C6F}, {0x0C78, 0x0C7E}, {0x0C80, 0x0C80},
    {0x0C85, 0x0C8C}, {0x0C8E, 0x0C90}, {0x0C92, 0x0CA8}, {0x0CAA, 0x0CB3}, {0x0CB5, 0x0CB9},
    {0x0CBD, 0x0CBD}, {0x0CDC, 0x0CDE}, {0x0CE0, 0x0CE1}, {0x0CE6, 0x0CEF}, {0x0CF1, 0x0CF2},
    {0x0D04, 0x0D0C}, {0x0D0E, 0x0D10}, {0x0D12, 0x0D3A}, {0x0D3D, 0x0D3D}, {0x0D4E, 0x0D4E},
    {0x0D54, 0x0D56}, {0x0D58, 0x0D61}, {0x0D66, 0x0D78}, {0x0D7A, 0x0D7F}, {0x0D85, 0x0D96},
    {0x0D9A, 0x0DB1}, {0x0DB3, 0x0DBB}, {0x0DBD, 0x0DBD}, {0x0DC0, 0x0DC6}, {0x0DE6, 0x0DEF},
    {0x0E01, 0x0E30}, {0x0E32, 0x0E33}, {0x0E40, 0x0E46}, {0x0E50, 0x0E59}, {0x0E81, 0x0E82},
    {0x0E84, 0x0E84}, {0x0E86, 0x0E8A}, {0x0E8C, 0x0EA3}, {0x0EA5, 0x0EA5}, {0x0EA7, 0x0EB0},
    {0x0EB2, 0x0EB3}, {0x0EBD, 0x0EBD}, {0x0EC0, 0x0EC4}, {0x0EC6, 0x0EC6}, {0x0ED0, 0x0ED9},
    {0x0EDC, 0x0EDF}, {0x0F00, 0x0F00}, {0x0F20, 0x0F33}, {0x0F40, 0x0F47}, {0x0F49, 0x0F6C},
    {0x0F88, 0x0F8C}, {0x1000, 0x102A}, {0x103F, 0x1049}, {0x1050, 0x1055}, {0x105A, 0x105D},
    {0x1061, 0x1061}, {0x1065, 0x1066}, {0x106E, 0x1070}, {0x1075, 0x1081}, {0x108E, 0x108E},
    {0x1090, 0x1099}, {0x10A0, 0x10C5}, {0x10C7, 0x10C7}, {0x10CD, 0x10CD}, {0x10D0, 0x10FA},
    {0x10FC, 0x1248}, {0x124A, 0x124D}, {0x1250, 0x1256}, {0x1258, 0x1258}, {0x125A, 0x125D},
    {0x1260, 0x1288}, {0x128A, 0x128D}, {0x1290, 0x12B0}, {0x12B2, 0x12B5}, {0x12B8, 0x12BE},
    {0x12C0, 0x12C0}, {0x12C2, 0x12C5}, {0x12C8, 0x12D6}, {0x12D8, 0x1310}, {0x1312, 0x1315},
    {0x1318, 0x135A}, {0x1369, 0x137C}, {0x1380, 0x138F}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
    {0x1401, 0x166C}, {0x166F, 0x167F}, {0x1681, 0x169A}, {0x16A0, 0x16EA}, {0x16EE, 0x16F8},
    {0x1700, 0x1711}, {0x171F, 0x1731}, {0x1740, 0x1751}, {0x1760, 0x176C}, {0x176E, 0x1770},
    {0x1780, 0x17B3}, {0x17D7, 0x17D7}, {0x17DC, 0x17DC}, {0x17E0, 0x17E9}, {0x17F0, 0x17F9},
    {0x1810, 0x1819}, {0x1820, 0x1878}, {0x1880, 0x1884}, {0x1887, 0x18A8}, {0x18AA, 0x18AA},
    {0x18B0, 0x18F5}, {0x1900, 0x191E}, {0x1946, 0x196D}, {0x1970, 0x1974}, {0x1980, 0x19AB},
    {0x19B0, 0x19C9}, {0x19D0, 0x19DA}, {0x1A00, 0x1A16}, {0x1A20, 0x1A54}, {0x1A80, 0x1A89},
    {0x1A90, 0x1A99}, {0x1AA7, 0x1AA7}, {0x1B05, 0x1B33}, {0x1B45, 0x1B4C}, {0x1B50, 0x1B59},
    {0x1B83, 0x1BA0}, {0x1BAE, 0x1BE5}, {0x1C00, 0x1C23}, {0x1C40, 0x1C49}, {0x1C4D, 0x1C7D},
    {0x1C80, 0x1C8A}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1CE9, 0x1CEC}, {0x1CEE, 0x1CF3},
    {0x1CF5, 0x1CF6}, {0x1CFA, 0x1CFA}, {0x1D00, 0x1DBF}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2070, 0x2071}, {0x2074, 0x2079}, {0x207F, 0x2089},
    {0x2090, 0x209C}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115},
    {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D},
    {0x212F, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2150, 0x2189},
    {0x2460, 0x249B}, {0x24EA, 0x24FF}, {0x2776, 0x2793}, {0x2C00, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0x2CFD, 0x2CFD}, {0x2D00, 0x2D25}, {0x2D27, 0x2D27}, {0x2D2D, 0x2D2D},
    {0x2D30, 0x2D67}, {0x2D6F, 0x2D6F}, {0x2D80, 0x2D96}, {0x2DA0, 0x2DA6}, {0x2DA8, 0x2DAE},
    {0x2DB0, 0x2DB6}, {0x2DB8, 0x2DBE}, {0x2DC0, 0x2DC6}, {0x2DC8, 0x2DCE}, {0x2DD0, 0x2DD6},
    {0x2DD8, 0x2DDE}, {0x2E2F, 0x2E2F}, {0x3005, 0x3007}, {0x3021, 0x3029}, {0x3031, 0x3035},
    {0x3038, 0x303C}, {0x3041, 0x3096}, {0x309D, 0x309F}, {0x30A1, 0x30FA}, {0x30FC, 0x30FF},
    {0x3105, 0x312F}, {0x3131, 0x318E}, {0x3192, 0x3195}, {0x31A0, 0x31BF}, {0x31F0, 0x31FF},
    {0x3220, 0x3229}, {0x3248, 0x324F}, {0x3251, 0x325F}, {0x3280, 0x3289}, {0x32B1, 0x32BF},
    {0x3400, 0x4DBF}, {0x4E00, 0xA48C}, {0xA4D0, 0xA4FD}, {0xA500, 0xA60C}, {0xA610, 0xA62B},
    {0xA640, 0xA66E}, {0xA67F, 0xA69D}, {0xA6A0, 0xA6EF}, {0xA717, 0xA71F}, {0xA722, 0xA788},
    {0xA78B, 0xA7DC}, {0xA7F1, 0xA801}, {0xA803, 0xA805}, {0xA807, 0xA80A}, {0xA80C, 0xA822},
    {0xA830, 0xA835}, {0xA840, 0xA873}, {0xA882, 0xA8B3}, {0xA8D0, 0xA8D9}, {0xA8F2, 0xA8F7},
    {0xA8FB, 0xA8FB}, {0xA8FD, 0xA8FE}, {0xA900, 0xA925}, {0xA930, 0xA946}, {0xA960, 0xA97C},
    {0xA984, 0xA9B2}, {0xA9CF, 0xA9D9}, {0xA9E0, 0xA9E4}, {0xA9E6, 0xA9FE}, {0xAA00, 0xAA28},
    {0xAA40, 0xAA42}, {0xAA44, 0xAA4B}, {0xAA50, 0xAA59}, {0xAA60, 0xAA76}, {0xAA7A, 0xAA7A},
    {0xAA7E, 0xAAAF}, {0xAAB1, 0xAAB1}, {0xAAB5, 0xAAB6}, {0xAAB9, 0xAABD}, {0xAAC0, 0xAAC0},
    {0xAAC2, 0xAAC2}, {0xAADB, 0xAADD}, {0xAAE0, 0xAAEA}, {0xAAF2, 0xAAF4}, {0xAB01, 0xAB06},
    {0xAB09, 0xAB0E}, {0xAB11, 0xAB16}, {0xAB20, 0xAB26}, {0xAB28, 0xAB2E}, {0xAB30, 0xAB5A},
    {0xAB5C, 0xAB69}, {0xAB70, 0xABE2}, {0xABF0, 0xABF9}, {0xAC00, 0xD7A3}, {0xD7B0, 0xD7C6},
    {0xD7CB, 0xD7FB}, {0xF900, 0xFA6D}, {0xFA70, 0xFAD9}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
    {0xFB1D, 0xFB1D}, {0xFB1F, 0xFB28}, {0xFB2A, 0xFB36}, {0xFB38, 0xFB3C}, {0xFB3E, 0xFB3E},
    {0xFB40, 0xFB41}, {0xFB43, 0xFB44}, {0xFB46, 0xFBB1}, {0xFBD3, 0xFD3D}, {0xFD50, 0xFD8F},
    {0xFD92, 0xFDC7}, {0xFDF0, 0xFDFB}, {0xFE70, 0xFE74}, {0xFE76, 0xFEFC}, {0xFF10, 0xFF19},
    {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0xFF66, 0xFFBE}, {0xFFC2, 0xFFC7}, {0xFFCA, 0xFFCF},
    {0xFFD2, 0xFFD7}, {0xFFDA, 0xFFDC}, {0x10000, 0x1000B}, {0x1000D, 0x10026},
    {0x10028, 0x1003A}, {0x1003C, 0x1003D}, {0x1003F, 0x1004D}, {0x10050, 0x1005D},
    {0x10080, 0x100FA}, {0x10107, 0x10133}, {0x10140, 0x10178}, {0x1018A, 0x1018B},
    {0x10280, 0x1029C}, {0x102A0, 0x102D0}, {0x102E1, 0x102FB}, {0x10300, 0x10323},
    {0x1032D, 0x1034A}, {0x10350, 0x10375}, {0x10380, 0x1039D}, {0x103A0, 0x103C3},
    {0x103C8, 0x103CF}, {0x103D1, 0x103D5}, {0x10400, 0x1049D}, {0x104A0, 0x104A9},
    {0x104B0, 0x104D3}, {0x104D8, 0x104FB}, {0x10500, 0x10527}, {0x10530, 0x10563},
    {0x10570, 0x1057A}, {0x1057C, 0x1058A}, {0x1058C, 0x10592}, {0x10594, 0x10595},
    {0x10597, 0x105A1}, {0x105A3, 0x105B1}, {0x105B3, 0x105B9}, {0x105BB, 0x105BC},
    {0x105C0, 0x105F3}, {0x10600, 0x10736}, {0x10740, 0x10755}, {0x10760, 0x10767},
    {0x10780, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x10800, 0x10805},
    {0x10808, 0x10808}, {0x1080A, 0x10835}, {0x10837, 0x10838}, {0x1083C, 0x1083C},
    {0x1083F, 0x10855}, {0x10858, 0x10876}, {0x10879, 0x1089E}, {0x108A7, 0x108AF},
    {0x108E0, 0x108F2}, {0x108F4, 0x108F5}, {0x108FB, 0x1091B}, {0x10920, 0x10939},
    {0x10940, 0x10959}, {0x10980, 0x109B7}, {0x109BC, 0x109CF}, {0x109D2, 0x10A00},
    {0x10A10, 0x10A13}, {0x10A15, 0x10A17}, {0x10A19, 0x10A35}, {0x10A40, 0x10A48},
    {0x10A60, 0x10A7E}, {0x10A80, 0x10A9F}, {0x10AC0, 0x10AC7}, {0x10AC9, 0x10AE4},
    {0x10AEB, 0x10AEF}, {0x10B00, 0x10B35}, {0x10B40, 0x10B55}, {0x10B58, 0x10B72},
    {0x10B78, 0x10B91}, {0x10BA9, 0x10BAF}, {0x10C00, 0x10C48}, {0x10C80, 0x10CB2},
    {0x10CC0, 0x10CF2}, {0x10CFA, 0x10D23}, {0x10D30, 0x10D39}, {0x10D40, 0x10D65},
    {0x10D6F, 0x10D85}, {0x10E60, 0x10E7E}, {0x10E80, 0x10EA9}, {0x10EB0, 0x10EB1},
    {0x10EC2, 0x10EC7}, {0x10F00, 0x10F27}, {0x10F30, 0x10F45}, {0x10F51, 0x10F54},
    {0x10F70, 0x10F81}, {0x10FB0, 0x10FCB}, {0x10FE0, 0x10FF6}, {0x11003, 0x11037},
    {0x11052, 0x1106F}, {0x11071, 0x11072}, {0x11075, 0x11075}, {0x11083, 0x110AF},
    {0x110D0, 0x110E8}, {0x110F0, 0x110F9}, {0x11103, 0x11126}, {0x11136, 0x1113F},
    {0x11144, 0x11144}, {0x11147, 0x11147}, {0x11150, 0x11172}, {0x11176, 0x11176},
    {0x11183, 0x111B2}, {0x111C1, 0x111C4}, {0x111D0, 0x111DA}, {0x111DC, 0x111DC},
    {0x111E1, 0x111F4}, {0x11200, 0x11211}, {0x11213, 0x1122B}, {0x1123F, 0x11240},
    {0x11280, 0x11286}, {0x11288, 0x11288}, {0x1128A, 0x1128D}, {0x1128F, 0x1129D},
    {0x1129F, 0x112A8}, {0x112B0, 0x112DE}, {0x112F0, 0x112F9}, {0x11305, 0x1130C},
    {0x1130F, 0x11310}, {0x11313, 0x11328}, {0x1132A, 0x11330}, {0x11332, 0x11333},
    {0x11335, 0x11339}, {0x1133D, 0x1133D}, {0x11350, 0x11350}, {0x1135D, 0x11361},
    {0x11380, 0x11389}, {0x1138B, 0x1138B}, {0x1138E, 0x1138E}, {0x11390, 0x113B5},
    {0x113B7, 0x113B7}, {0x113D1, 0x113D1}, {0x113D3, 0x113D3}, {0x11400, 0x11434},
    {0x11447, 0x1144A}, {0x11450, 0x11459}, {0x1145F, 0x11461}, {0x11480, 0x114AF},
    {0x114C4, 0x114C5}, {0x114C7, 0x114C7}, {0x114D0, 0x114D9}, {0x11580, 0x115AE},
    {0x115D8, 0x115DB}, {0x11600, 0x1162F}, {0x11644, 0x11644}, {0x11650, 0x11659},
    {0x11680, 0x116AA}, {0x116B8, 0x116B8}, {0x116C0, 0x116C9}, {0x116D0, 0x116E3},
    {0x11700, 0x1171A}, {0x11730, 0x1173B}, {0x11740, 0x11746}, {0x11800, 0x1182B},
    {0x118A0, 0x118F2}, {0x118FF, 0x11906}, {0x11909, 0x11909}, {0x1190C, 0x11913},
    {0x11915, 0x11916}, {0x11918, 0x1192F}, {0x1193F, 0x1193F}, {0x11941, 0x11941},
    {0x11950, 0x11959}, {0x119A0, 0x119A7}, {0x119AA, 0x119D0}, {0x119E1, 0x119E1},
    {0x119E3, 0x119E3}, {0x11A00, 0x11A00}, {0x11A0B, 0x11A32}, {0x11A3A, 0x11A3A},
    {0x11A50, 0x11A50}, {0x11A5C, 0x11A89}, {0x11A9D, 0x11A9D}, {0x11AB0, 0x11AF8},
    {0x11BC0, 0x11BE0}, {0x11BF0, 0x11BF9}, {0x11C00, 0x11C08}, {0x11C0A, 0x11C2E},
    {0x11C40, 0x11C40}, {0x11C50, 0x11C6C}, {0x11C72, 0x11C8F}, {0x11D00, 0x11D06},
    {0x11D08, 0x11D09}, {0x11D0B, 0x11D30}, {0x11D46, 0x11D46}, {0x11D50, 0x11D59},
    {0x11D60, 0x11D65}, {0x11D67, 0x11D68}, {0x11D6A, 0x11D89}, {0x11D98, 0x11D98},
    {0x11DA0, 0x11DA9}, {0x11DB0, 0x11DDB}, {0x11DE0, 0x11DE9}, {0x11EE0, 0x11EF2},
    {0x11F02, 0x11F02}, {0x11F04, 0x11F10}, {0x11F12, 0x11F33}, {0x11F50, 0x11F59},
    {0x11FB0, 0x11FB0}, {0x11FC0, 0x11FD4}, {0x12000, 0x12399}, {0x12400, 0x1246E},
    {0x12480, 0x12543}, {0x12F90, 0x12FF0}, {0x13000, 0x1342F}, {0x13441, 0x13446},
    {0x13460, 0x143FA}, {0x14400, 0x14646}, {0x16100, 0x1611D}, {0x16130, 0x16139},
    {0x16800, 0x16A38}, {0x16A40, 0x16A5E}, {0x16A60, 0x16A69}, {0x16A70, 0x16ABE},
    {0x16AC0, 0x16AC9}, {0x16AD0, 0x16AED}, {0x16B00, 0x16B2F}, {0x16B40, 0x16B43},
    {0x16B50, 0x16B59}, {0x16B5B, 0x16B61}, {0x16B63, 0x16B77}, {0x16B7D, 0x16B8F},
    {0x16D40, 0x16D6C}, {0x16D70, 0x16D79}, {0x16E40, 0x16E96}, {0x16EA0, 0x16EB8},
    {0x16EBB, 0x16ED3}, {0x16F00, 0x16F4A}, {0x16F50, 0x16F50}, {0x16F93, 0x16F9F},
    {0x16FE0, 0x16FE1}, {0x16FE3, 0x16FE3}, {0x16FF2, 0x16FF6}, {0x17000, 0x18CD5},
    {0x18CFF, 0x18D1E}, {0x18D80, 0x18DF2}, {0x1AFF0, 0x1AFF3}, {0x1AFF5, 0x1AFFB},
    {0x1AFFD, 0x1AFFE}, {0x1B000, 0x1B122}, {0x1B132, 0x1B132}, {0x1B150, 0x1B152},
    {0x1B155, 0x1B155}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB}, {0x1BC00, 0x1BC6A},
    {0x1BC70, 0x1BC7C}, {0x1BC80, 0x1BC88}, {0x1BC90, 0x1BC99}, {0x1CCF0, 0x1CCF9},
    {0x1D2C0, 0x1D2D3}, {0x1D2E0, 0x1D2F3}, {0x1D360, 0x1D378}, {0x1D400, 0x1D454},
    {0x1D456, 0x1D49C}, {0x1D49E, 0x1D49F}, {0x1D4A2, 0x1D4A2}, {0x1D4A5, 0x1D4A6},
    {0x1D4A9, 0x1D4AC}, {0x1D4AE, 0x1D4B9}, {0x1D4BB, 0x1D4BB}, {0x1D4BD, 0x1D4C3},
    {0x1D4C5, 0x1D505}, {0x1D507, 0x1D50A}, {0x1D50D, 0x1D514}, {0x1D516, 0x1D51C},
    {0x1D51E, 0x1D539}, {0x1D53B, 0x1D53E}, {0x1D540, 0x1D544}, {0x1D546, 0x1D546},
    {0x1D54A, 0x1D550}, {0x1D552, 0x1D6A5}, {0x1D6A8, 0x1D6C0}, {0x1D6C2, 0x1D6DA},
    {0x1D6DC, 0x1D6FA}, {0x1D6FC, 0x1D714}, {0x1D716, 0x1D734}, {0x1D736, 0x1D74E},
    {0x1D750, 0x1D76E}, {0x1D770, 0x1D788}, {0x1D78A, 0x1D7A8}, {0x1D7AA, 0x1D7C2},
    {0x1D7C4, 0x1D7CB}, {0x1D7CE, 0x1D7FF}, {0x1DF00, 0x1DF1E}, {0x1DF25, 0x1DF2A},
    {0x1E030, 0x1E06D}, {0x1E100, 0x1E12C}, {0x1E137, 0x1E13D}, {0x1E140, 0x1E149},
    {0x1E14E, 0x1E14E}, {0x1E290, 0x1E2AD}, {0x1E2C0, 0x1E2EB}, {0x1E2F0, 0x1E2F9},
    {0x1E4D0, 0x1E4EB}, {0x1E4F0, 0x1E4F9}, {0x1E5D0, 0x1E5ED}, {0x1E5F0, 0x1E5FA},
    {0x1E6C0, 0x1E6DE}, {0x1E6E0, 0x1E6E2}, {0x1E6E4, 0x1E6E5}, {0x1E6E7, 0x1E6ED},
    {0x1E6F0, 0x1E6F4}, {0x1E6FE, 0x1E6FF}, {0x1E7E0, 0x1E7E6}, {0x1E7E8, 0x1E7EB},
    {0x1E7ED, 0x1E7EE}, {0x1E7F0, 0x1E7FE}, {0x1E800, 0x1E8C4}, {0x1E8C7, 0x1E8CF},
    {0x1E900, 0x1E943}, {0x1E94B, 0x1E94B}, {0x1E950, 0x1E959}, {0x1EC71, 0x1ECAB},
    {0x1ECAD, 0x1ECAF}, {0x1ECB1, 0x1ECB4}, {0x1ED01, 0x1ED2D}, {0x1ED2F, 0x1ED3D},
    {0x1EE00, 0x1EE03}, {0x1EE05, 0x1EE1F}, {0x1EE21, 0x1EE22}, {0x1EE24, 0x1EE24},
    {0x1EE27, 0x1EE27}, {0x1EE29, 0x1EE32}, {0x1EE34, 0x1EE37}, {0x1EE39, 0x1EE39},
    {0x1EE3B, 0x1EE3B}, {0x1EE42, 0x1EE42}, {0x1EE47, 0x1EE47}, {0x1EE49, 0x1EE49},
    {0x1EE4B, 0x1EE4B}, {0x1EE4D, 0x1EE4F}, {0x1EE51, 0x1EE52}, {0x1EE54, 0x1EE54},
    {0x1EE57, 0x1EE57}, {0x1EE59, 0x1EE59}, {0x1EE5B, 0x1EE5B}, {0x1EE5D, 0x1EE5D},
    {0x1EE5F, 0x1EE5F}, {0x1EE61, 0x1EE62}, {0x1EE64, 0x1EE64}, {0x1EE67, 0x1EE6A},
    {0x1EE6C, 0x1EE72}, {0x1EE74, 0x1EE77}, {0x1EE79, 0x1EE7C}, {0x1EE7E, 0x1EE7E},
    {0x1EE80, 0x1EE89}, {0x1EE8B, 0x1EE9B}, {0x1EEA1, 0x1EEA3}, {0x1EEA5, 0x1EEA9},
    {0x1EEAB, 0x1EEBB}, {0x1F100, 0x1F10C}, {0x1FBF0, 0x1FBF9}, {0x20000, 0x2A6DF},
    {0x2A700, 0x2B81D}, {0x2B820, 0x2CEAD}, {0x2CEB0, 0x2EBE0}, {0x2EBF0, 0x2EE5D},
    {0x2F800, 0x2FA1D}, {0x30000, 0x3134A}, {0x31350, 0x33479},
};

bool in_ranges(std::span<const code_point_range> ranges, char32_t cp) {
  const auto starts_after = [](char32_t v, const code_point_range& r) { return v < r.first; };
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), cp, starts_after);
  return it != ranges.begin() && cp <= std::prev(it)->last;
}

bool is_punctuation(char32_t cp) { return in_ranges(punctuation_ranges, cp); }
bool is_letter_or_number(char32_t cp) { return in_ranges(letter_or_number_ranges, cp); }

}  // namespace
}  // namespace sessionrt::actors
