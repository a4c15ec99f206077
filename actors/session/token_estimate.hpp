// Token estimates for context-window decisions when the provider reported no usage [R§10].
// Pure functions over pi-ai message objects (roles user, assistant, toolResult, custom,
// bashExecution, compactionSummary, branchSummary); nothing here throws or allocates state.
// - Character counts are JavaScript string lengths (UTF-16 code units), counted from UTF-8.
// - A message of an unknown role, or a field of the wrong type, counts 0 where pi would
//   count 0 or crash; the estimate never fails.
// - Rules follow pi-coding-agent 0.73.1 `estimateTokens` / `estimateContextTokens`, plus the
//   two additions of [R§10] / SPEC §4: an image block in *user* content counts 4800 chars
//   (pi counts it only for toolResult/custom), and `usage.contextUsage` (state "available")
//   wins in calculate_context_tokens.
#pragma once
#include "messages/utf8.hpp"
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sessionrt::actors {

inline constexpr std::int64_t kImageEstimateChars = 4800;


// ceil(chars / 4) with the per-role character rules of [R§10].
std::int64_t estimate_tokens(const boost::json::object& message);
// ceil(chars / 4) of a plain text (the system prompt), chars counted as JavaScript does.
std::int64_t estimate_text_tokens(std::string_view text);

// usage.contextUsage.totalTokens when contextUsage.state == "available";
// else usage.totalTokens when non-zero; else input + output + cacheRead + cacheWrite.
std::int64_t calculate_context_tokens(const boost::json::object& usage);

// input + cacheRead + cacheWrite: the prompt side of one call (what SessionEntry.totalTokens holds).
std::int64_t prompt_tokens_of_usage(const boost::json::object& usage);

struct context_token_estimate {
  std::int64_t tokens = 0;           // usage_tokens + trailing_tokens
  std::int64_t usage_tokens = 0;     // from the last valid assistant usage, 0 without one
  std::int64_t trailing_tokens = 0;  // estimates of the messages after it (all, without one)
  std::optional<std::size_t> last_usage_index;
};

// The last assistant message that is not aborted/error and carries usage gives the base;
// every later message adds its estimate. Without such a message: the sum of all estimates.
context_token_estimate estimate_context_tokens(std::span<const boost::json::object> messages);
// The same over a context array (elements that are not objects are skipped).
context_token_estimate estimate_context_tokens(const boost::json::array& messages);

}  // namespace sessionrt::actors
