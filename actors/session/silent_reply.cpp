#include "actors/session/silent_reply.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "messages/ascii_text.hpp"
#include "messages/js_regex.hpp"
#include "messages/js_text.hpp"
#include "messages/json_reader.hpp"

// The JavaScript regexes of openclaw 2026.9.6 src/auto-reply/tokens.ts (the installed build's
// dist/tokens-BTKQYTUd.mjs), with the token NO_REPLY put in as its createTokenRegex does, run by
// PCRE2 through js_regex (JavaScript's \s, ^ $, case folding). Two of them end in an unbounded
// lookbehind, which V8 runs right to left from the end and PCRE2 10.42 cannot compile; each is
// replaced by a forward regex whose leftmost match starts where the JavaScript capture starts
// (see trailing_punctuation and trailing_tokens below). The helpers around the regexes follow
// tokens.ts line by line; the streaming gate at the end is this runtime's own.

namespace sessionrt::actors {
namespace {

constexpr std::string_view token = silent_reply_token;
constexpr std::size_t token_size = token.size();
constexpr std::size_t npos = std::string_view::npos;

struct silent_regexes {
  // getSilentExactRegex
  js_regex exact = js_regex::literal(R"(^\s*NO_REPLY(?:\s+NO_REPLY)*\s*$)", "i");
  // stripEdgePunctuation: /^\p{P}+/u, and /$(?<=(\p{P}+))/u, whose capture is the maximal run
  // of punctuation that ends the text: the leftmost match of \p{P}+$ starts there; starting only
  // where a run starts keeps the search linear.
  js_regex leading_punctuation = js_regex::literal(R"(^\p{P}+)", "u");
  js_regex trailing_punctuation = js_regex::literal(R"((?<!\p{P})\p{P}+$)", "u");
  // getSilentTrailingRegex /$(?<=((?:^|\s+|\*+)NO_REPLY(?:\s+NO_REPLY)*\s*))/i. Right to left, V8
  // takes the trailing \s*, as many " NO_REPLY" as it can, then ^, the whole \s+ run or the whole
  // \*+ run before the leftmost token; when that token has none of them, one token fewer, and so
  // on. That is the leftmost start of a forward match of the same sequence ending at $. The
  // lookbehinds only skip starts that cannot be leftmost (inside a run, or at the space after a
  // token that could itself start the match), so the search stays linear.
  js_regex trailing_tokens = js_regex::literal(
      R"((?:^|(?<!\s)(?<!^NO_REPLY)(?<![\s*]NO_REPLY)\s+|(?<!\*)\*+)NO_REPLY(?:\s+NO_REPLY)*\s*$)", "i");
  // getSilentLeadingRegex and getSilentLeadingAttachedRegex
  js_regex leading_tokens = js_regex::literal(R"(^\s*NO_REPLY((?:\s*NO_REPLY)*)(\s*))", "i");
  js_regex leading_attached = js_regex::literal(R"(^\s*(?:NO_REPLY\s+)*NO_REPLY(?=[\p{L}\p{N}]))", "iu");
  // stripFinalSilentToken
  js_regex final_token = js_regex::literal(R"((?:^|[\s*.])NO_REPLY\s*$)", "i");
  js_regex tagged_reasoning_prefix = js_regex::literal(
      R"(^\s*<\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\b[^<>]*>[\s\S]*?<\s*\/\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\s*>\s*)",
      "i");
  js_regex open_reasoning_prefix =
      js_regex::literal(R"(^\s*<\s*(?:(?:antml:|mm:)?(?:think(?:ing)?|thought)|antthinking)\b[^<>]*>)", "i");
  js_regex plain_reasoning_prefix =
      js_regex::literal(R"(^\s*(?:think(?:ing)?|thought|analysis|reasoning)\s*:?\s*\r?\n)", "i");
  js_regex silent_intent_text = js_regex::literal(
      R"(^\s*(?:i|i'll|i\s+will|i'm|i\s+am|we|we'll|we\s+will|the\s+assistant|assistant|the\s+bot|bot|openclaw)\s+(?:(?:will\s+)?(?:stay|remain|keep|be)\s+(?:quiet|silent)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:do\s+not|don't|dont|will\s+not|won't|would\s+not|should\s+not)\s+(?:reply|respond)(?:\s+(?:here|for\s+now|on\s+this|in\s+this\s+(?:chat|thread|channel|conversation)))?|(?:have|has)\s+nothing\s+(?:to|for)\s+(?:say|add|reply|respond))(?:[.!?]+)?\s*$)",
      "i");
  js_regex substantive_answer_cue = js_regex::literal(
      R"(\b(?:answer|here(?:'s|\s+is)|tell\s+them|you\s+(?:should|can|could|need|must)|please|try|use|send|service\s+is|resolved|retry|yes|no,|sure)\b)",
      "i");
  js_regex bare_reasoning_placeholder = js_regex::literal(
      R"(^\s*(?:(?:internal|private)\s+)?(?:reasoning|thinking|thoughts?|analysis)(?:\s+notes?)?\s*$)", "i");
  // The streaming gate's "nothing but white space and punctuation so far" prefix.
  js_regex space_punctuation_space = js_regex::literal(R"(^\s*\p{P}*\s*)", "u");
};

const silent_regexes& rx() {
  static const silent_regexes regexes;
  return regexes;
}

// Where the regex's match ends in s (anchored regexes: the length of the prefix it matched).
std::optional<std::size_t> match_end(const js_regex& re, std::string_view s) {
  const auto m = re.find(s);
  if (!m) return std::nullopt;
  return m->whole.end;
}

// ---------------------------------------------------------------- characters (UTF-8)

// The code point starting at s[i]; a byte that starts no well-formed sequence is one U+FFFD.
code_point decode_at(std::string_view s, std::size_t i) {
  const code_point cp = decode_utf8_at(s, i);
  return cp.length == 0 ? code_point{0xFFFD, 1} : cp;
}

// Past the JavaScript white space from s[i] (trimStart's end).
std::size_t skip_space(std::string_view s, std::size_t i) {
  return i >= s.size() ? i : s.size() - js_trim_start(s.substr(i)).size();
}

// ASCII case-insensitive `word` at s[i].
bool iequals_at(std::string_view s, std::size_t i, std::string_view word) {
  if (i > s.size() || s.size() - i < word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k) {
    if (ascii_lower_char(s[i + k]) != ascii_lower_char(word[k])) return false;
  }
  return true;
}

bool token_at(std::string_view s, std::size_t i) { return iequals_at(s, i, token); }

// text.toLowerCase().includes("no_reply"): no non-ASCII character lowercases into the token's
// letters, so an ASCII comparison is the same test.
// Found from the token's one '_' (memchr), which most text lacks.
bool icontains_token(std::string_view s) {
  static_assert(token.substr(2, 1) == "_" && token.find('_', 3) == std::string_view::npos);
  for (std::size_t u = s.find('_', 2); u != npos; u = s.find('_', u + 1)) {
    if (token_at(s, u - 2)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- whole-payload token

// stripEdgePunctuation: text.slice(leading \p{P}+ length, length - trailing \p{P}+ length).
std::string_view strip_edge_punctuation(std::string_view s) {
  const std::size_t start = match_end(rx().leading_punctuation, s).value_or(0);
  const auto tail = rx().trailing_punctuation.find(s);
  const std::size_t end = tail ? tail->whole.begin : s.size();
  return end <= start ? std::string_view{} : s.substr(start, end - start);
}

// ---------------------------------------------------------------- JSON forms

std::string_view as_view(const boost::json::string& s) { return {s.data(), s.size()}; }

// A JSON string literal whose value, trimmed, is exactly the token.
bool is_silent_json_string(std::string_view text) {
  const std::string_view t = js_trim(text);
  if (t.empty() || t.front() != '"' || t.back() != '"' || t.find(token) == npos) return false;
  const auto parsed = json::parse(t);
  return parsed.ok() && parsed->is_string() && js_trim(as_view(parsed->as_string())) == token;
}

// {"action":"NO_REPLY"}: an object with exactly the one key "action", a string, trimmed.
bool is_silent_envelope(std::string_view text) {
  const std::string_view t = js_trim(text);
  if (t.empty() || t.front() != '{' || t.back() != '}' || t.find(token) == npos) return false;
  const auto parsed = json::parse(t);
  if (!parsed.ok() || !parsed->is_object()) return false;
  const auto& obj = parsed->as_object();
  if (obj.size() != 1 || obj.begin()->key() != "action") return false;
  const auto& action = obj.begin()->value();
  return action.is_string() && js_trim(as_view(action.as_string())) == token;
}


// ---------------------------------------------------------------- reasoning prefixes

// stripLeadingReasoningBlocks: remove taggedReasoningPrefixRe matches while there are any.
std::string_view strip_leading_reasoning_blocks(std::string_view s) {
  while (const auto end = match_end(rx().tagged_reasoning_prefix, s)) s = s.substr(*end);
  return s;
}

// stripFinalSilentToken: text.replace(/(?:^|[\s*.])NO_REPLY\s*$/i, "").trim(), or nullopt when
// that is text.trim().
std::optional<std::string> strip_final_silent_token(std::string_view s) {
  const auto m = rx().final_token.find(s);
  if (!m) return std::nullopt;
  std::string rest(s.substr(0, m->whole.begin));
  rest.append(s.substr(m->whole.end));
  std::string stripped(js_trim(rest));
  if (stripped == js_trim(s)) return std::nullopt;
  return stripped;
}

bool is_silent_intent_text(std::string_view s) { return rx().silent_intent_text.search(s); }

// hasSilentIntentFinalSilentToken
bool has_silent_intent_final_token(std::string_view s) {
  const auto without = strip_final_silent_token(s);
  return without && (without->empty() || is_silent_intent_text(*without));
}

// withoutToken.split(/\r?\n/).map(trim).filter(Boolean): js_trim() also drops the \r.
std::vector<std::string_view> nonblank_trimmed_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= s.size();) {
    std::size_t nl = s.find('\n', start);
    if (nl == npos) nl = s.size();
    const std::string_view line = js_trim(s.substr(start, nl - start));
    if (!line.empty()) lines.push_back(line);
    start = nl + 1;
  }
  return lines;
}

// hasPlainReasoningFinalSilentToken
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
                                      !previous.empty() && !rx().substantive_answer_cue.search(previous);
  return intent_after_reasoning || rx().bare_reasoning_placeholder.search(*without);
}

// isReasoningPrefixedSilentReplyText.
bool is_reasoning_prefixed_silent(std::string_view text) {
  const std::string_view t = js_trim(text);
  if (t.empty()) return false;
  const std::string_view without_blocks = strip_leading_reasoning_blocks(t);
  if (without_blocks.size() != t.size())
    return is_silent_reply_text(without_blocks) || has_silent_intent_final_token(without_blocks);
  if (const auto end = match_end(rx().open_reasoning_prefix, t)) {
    const std::string_view rest = t.substr(*end);
    return is_silent_reply_text(rest) || has_plain_reasoning_final_token(rest);
  }
  if (const auto end = match_end(rx().plain_reasoning_prefix, t)) {
    const std::string_view rest = t.substr(*end);
    return is_silent_reply_text(rest) || has_plain_reasoning_final_token(rest);
  }
  return false;
}

// ---------------------------------------------------------------- leading / trailing tokens

// Where stripSilentToken cuts: the start of the trailing-token capture, or npos.
std::size_t trailing_silent_cut(std::string_view s) {
  const auto m = rx().trailing_tokens.find(s);
  return m ? m->whole.begin : npos;
}

struct leading_tokens {
  std::size_t tokens_end;  // end of the last token (where group 2 starts)
  std::size_t end;         // end of the whitespace after it (the whole match)
};

// /^\s*NO_REPLY((?:\s*NO_REPLY)*)(\s*)/i
std::optional<leading_tokens> match_leading_tokens(std::string_view s) {
  const auto m = rx().leading_tokens.find(s);
  if (!m) return std::nullopt;
  return leading_tokens{m->groups[1]->begin, m->whole.end};
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
  if (js_trim_start(s).empty() || is_silent_reply_text(s) || is_silent_reply_prefix_text(s))
    return true;
  std::size_t i = match_end(rx().space_punctuation_space, s).value_or(0);
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
      if (ascii_lower_char(s[p + q]) != ascii_lower_char(token[q])) return {false, p + q};
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
  if (text.empty() || !icontains_token(text)) return false;  // every form holds the token
  const js_regex& exact = rx().exact;
  return exact.search(text) || exact.search(strip_edge_punctuation(js_trim(text)));
}

bool is_silent_reply_payload_text(std::string_view text) {
  // Each form needs the token (ASCII case-insensitively; the JSON forms exactly): the
  // context check runs this on every assistant message of a turn, most without it.
  if (!icontains_token(text)) return false;
  return is_silent_reply_text(text) || is_silent_json_string(text) || is_silent_envelope(text) ||
         is_reasoning_prefixed_silent(text);
}

std::string strip_silent_token(std::string_view text) {
  const std::size_t cut = trailing_silent_cut(text);
  return std::string(js_trim(cut == npos ? text : text.substr(0, cut)));
}

std::string strip_leading_silent_token(std::string_view text) {
  const auto leading = match_leading_tokens(text);
  return std::string(js_trim(leading ? text.substr(leading->end) : text));
}

bool starts_with_silent_token(std::string_view text) {
  if (text.empty()) return false;
  if (rx().leading_attached.search(text)) return true;
  const auto leading = match_leading_tokens(text);
  if (!leading) return false;
  const std::string_view gap = text.substr(leading->tokens_end, leading->end - leading->tokens_end);
  return gap.find_first_of("\r\n") != npos && leading->end < text.size();
}

bool is_silent_reply_prefix_text(std::string_view text) {
  const std::string_view t = js_trim_start(text);
  if (t.size() < 2 || t.size() > token_size || !token.starts_with(t)) return false;
  return t.find('_') != npos || t == token || t == "NO";
}

silent_reply_verdict final_reply_verdict(std::string_view text) {
  // Every rule above needs the token somewhere in the text (ASCII case-insensitively: no
  // character case-folds into its letters, see icontains_token); most replies lack it and need
  // none of the regexes, only the trim.
  if (!icontains_token(text)) {
    const std::string_view t = js_trim(text);
    if (t.empty()) return {false, {}};
    return {false, std::string(t)};
  }
  if (is_silent_reply_payload_text(text)) return {true, {}};
  std::string t(text);
  const bool leading = starts_with_silent_token(t);
  if (leading) t = strip_leading_silent_token(t);
  bool stripped = leading;
  if (leading || icontains_token(t)) {
    std::string after = strip_silent_token(t);
    stripped = stripped || after != js_trim(t);
    t = std::move(after);
  } else {
    t = std::string(js_trim(t));
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
    i = std::max(c.mismatch, i + decode_at(all_, i).length);
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
  return {false, std::string(js_trim_end(body.substr(released, end - released)))};
}


}  // namespace sessionrt::actors
