// staged_summary: how the built-in summarizer fits a conversation larger than the model's
// window into summary calls (OpenClaw summarizeWithFallback / summarizeInStages [R§6.4],
// the fix for the compaction "death spiral" of [R table row 4]: a transcript so large that the
// compaction request itself overflowed, forever).
// - A message whose estimate x 1.2 exceeds half the window is replaced, for the summary only,
//   by the user text "[Large <role> (~<N>K tokens) omitted from summary]".
// - The messages are split, in order, into chunks whose estimates x 1.2 fit the chunk budget:
//   window - summary max_tokens (the answer) - max_tokens (the running summary carried into the
//   next call) - overhead (4096, at most a quarter of a small window). Each chunk has at least
//   one message.
// - One chunk: one call, the exact pi request. More: chunk 1 is summarized (with the previous
//   compaction's summary, if any), and each later chunk updates the running summary with pi's
//   UPDATE prompt; the last answer is the history summary.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sessionrt::actors {

inline constexpr double kSummarySafetyMargin = 1.2;
inline constexpr std::int64_t kSummaryOverheadTokens = 4096;

// "[Large assistant (~52K tokens) omitted from summary]" (K = thousands, rounded).
std::string oversized_placeholder(std::string_view role, std::int64_t tokens);

// The messages with every oversized one replaced by its placeholder (a user message).
std::vector<boost::json::object> replace_oversized(std::span<const boost::json::object> messages,
                                                   std::int64_t context_window);

// The token budget of one chunk's messages for a model of `context_window` whose summary
// answers are capped at `max_tokens`; at least 1.
std::int64_t chunk_budget_tokens(std::int64_t context_window, std::int64_t max_tokens);

// Consecutive chunks of `messages` within `budget_tokens` (estimate x 1.2 each); empty input
// gives no chunks.
std::vector<std::vector<boost::json::object>> chunk_messages(std::span<const boost::json::object> messages,
                                                             std::int64_t budget_tokens);

}  // namespace sessionrt::actors
