// silent_reply: recognizing the NO_REPLY token in model replies [R§7.3], SPEC §4.
// Pure functions on UTF-8 text (invalid bytes are treated as U+FFFD: non-space,
// non-punctuation characters); no CAF, no I/O, nothing throws.
// The predicates and strippers behave as OpenClaw's src/auto-reply/tokens.ts, matched
// against the installed build dist/tokens-BTKQYTUd.mjs (openclaw 2026.9.6), and run its
// JavaScript regexes through messages/js_regex (PCRE2): "whitespace" is JavaScript's \s /
// trim() set, punctuation is Unicode \p{P}, "letter or number" is [\p{L}\p{N}] (PCRE2's
// Unicode 14 tables; Node's are Unicode 17, so characters assigned since are neither).
// silent_reply_filter is this runtime's streaming gate built from those rules.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace sessionrt::actors {

inline constexpr std::string_view silent_reply_token = "NO_REPLY";

// Whole payload is the token: /^\s*NO_REPLY(?:\s+NO_REPLY)*\s*$/i on the text, or on the
// trimmed text with its leading and trailing \p{P} runs removed ("NO_REPLY.", «NO_REPLY»).
bool is_silent_reply_text(std::string_view text);

// is_silent_reply_text, or: the JSON string "NO_REPLY"; the JSON object {"action":"NO_REPLY"}
// with exactly one key; a leading <think>…</think> / <thinking>… / "thinking:\n" block
// followed by the token, or by silent-intent text ("I'll stay quiet.") ending in the token.
bool is_silent_reply_payload_text(std::string_view text);

// Removes a trailing /(?:^|\s+|\*+)NO_REPLY(?:\s+NO_REPLY)*\s*$/i and trims the rest.
// An empty result means the message was silent.
std::string strip_silent_token(std::string_view text);

// Removes leading /^\s*NO_REPLY(?:\s*NO_REPLY)*\s*/i and trims the rest.
std::string strip_leading_silent_token(std::string_view text);

// The text starts with the token(s) glued to a letter or digit ("NO_REPLYThe user…"), or
// with the token(s), a line break, and more text.
bool starts_with_silent_token(std::string_view text);

// A streamed partial that may still become the token: trimStart() is upper case, 2..8
// characters, a prefix of "NO_REPLY", and contains "_" or is "NO" or is the whole token.
bool is_silent_reply_prefix_text(std::string_view text);

struct silent_reply_verdict {
  bool silent = false;  // the reply was a NO_REPLY form: deliver nothing for it
  std::string text;     // what is (still) to be delivered; empty when silent
};

// What to deliver of a complete reply (OpenClaw's normalize-reply order): nothing for a
// silent payload; otherwise leading tokens stripped (when starts_with_silent_token), then a
// trailing token stripped (when the text mentions the token), then trimmed. `silent` is set
// when a token form was found and nothing else remains. A blank reply is not "silent".
silent_reply_verdict final_reply_verdict(std::string_view text);

// Gate for one streamed reply. feed() each chunk and show what it returns; finish() once.
// - While the reply so far could still become a silent reply (whitespace, the token or an
//   upper-case prefix of it, "N" included, optionally after leading punctuation such as
//   "**" or "«", tokens repeated, lower case once it contains "_"), nothing is released.
// - As soon as it cannot, leading tokens are stripped ("NO_REPLY\nHello" releases "Hello")
//   and text is released, except for a tail that could still be a trailing token
//   (" NO_R", " **NO_REPLY", trailing whitespace); that tail is held until it cannot.
// - finish() reports the verdict for the whole reply and the held text still to deliver,
//   so released text + verdict.text == final_reply_verdict(whole).text whenever the forms
//   that are recognized only on the whole reply (JSON, reasoning-prefixed) are absent.
//   If such a form shows up after text was released, finish() says silent and the caller
//   decides what to do with what was shown (released_any() tells).
// - Chunks may split UTF-8 characters; a split character is held until it is complete, so
//   released pieces are always whole characters.
class silent_reply_filter {
 public:
  std::string feed(std::string_view chunk);
  silent_reply_verdict finish();
  bool released_any() const { return released_any_; }

 private:
  std::string release_up_to(std::size_t end);

  std::string all_;                     // every byte fed so far
  std::size_t body_start_ = npos;       // where deliverable text starts; npos: still held
  std::size_t released_end_ = 0;        // all_[body_start_, released_end_) was released
  bool released_any_ = false;
  bool finished_ = false;
  static constexpr std::size_t npos = std::string::npos;
};

}  // namespace sessionrt::actors
