// Is a model error a context-window overflow? [R§6.2]. Pure text rules, no state.
// - is_context_overflow_error: OpenClaw's explicit check (JSON era, as listed in [R§6.2]):
//   case-insensitive substrings and combinations, the Chinese proxy phrases, the provider
//   fallback regexes (gated by "looks like a context/limit message and is no rate limit"),
//   plus the explicit phrases later OpenClaw builds added (`context_overflow`, "prompt has N
//   tokens, but the configured context size is M", "input length N tokens exceeds the model
//   limit", "input (N tokens) is longer than the model's context length"). A TPM hint
//   ("tpm", "tokens per minute") or a reasoning-constraint message is never an overflow.
// - is_likely_context_overflow_error: the above, else a broad hint regex, excluding billing,
//   rate-limit and "context window too small" messages (OpenClaw `isLikelyContextOverflowError`).
// - matches_pi_overflow_pattern / is_context_overflow: pi-ai 0.73.1 `isContextOverflow`
//   (OVERFLOW_PATTERNS minus throttling/rate-limit, silent overflow, length-stop overflow), its
//   regexes verbatim, plus OpenClaw's TPM hint (`\btpm\b|tokens per minute`) as a rate limit.
// - extract_observed_overflow_token_count: OpenClaw 2026.9.6's patterns (sum patterns first).
// All regexes are JavaScript regexes run by PCRE2 (messages/js_regex.hpp), compiled once. The
// OpenClaw ones look at the first kRegexScanLimit bytes of the text only (substring rules see
// all of it), which bounds the cost of a huge error body; pi-ai's see the whole text, as in pi.
#pragma once
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sessionrt::actors {

inline constexpr std::size_t kRegexScanLimit = 16 * 1024;

bool is_context_overflow_error(std::string_view error_text);
bool is_likely_context_overflow_error(std::string_view error_text);

// The classifiers the exclusions use (OpenClaw failover message patterns).
bool is_rate_limit_error_text(std::string_view error_text);
bool is_billing_error_text(std::string_view error_text);

// pi-ai: OVERFLOW_PATTERNS match and no NON_OVERFLOW_PATTERNS match.
bool matches_pi_overflow_pattern(std::string_view error_text);

// pi-ai isContextOverflow on an assistant message:
//   stopReason "error" and errorMessage matches the pi patterns; or (context_window > 0)
//   stopReason "stop" and usage.input + usage.cacheRead > context_window (silent overflow); or
//   stopReason "length", usage.output == 0 and input + cacheRead >= 0.99 * context_window.
// context_window <= 0 means unknown: only the error text is checked.
bool is_context_overflow(const boost::json::object& assistant_message, std::int64_t context_window);

// The prompt size a provider reported in its overflow error ("prompt is too long: 213462
// tokens > 200000 maximum" -> 213462; "... (i.e 190000 + 16000 > 200000)" -> 206000).
std::optional<std::int64_t> extract_observed_overflow_token_count(std::string_view error_text);

}  // namespace sessionrt::actors
