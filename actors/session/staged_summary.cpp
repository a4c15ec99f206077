#include "actors/session/staged_summary.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "actors/session/token_estimate.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

std::int64_t with_margin(std::int64_t tokens) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(tokens) * kSummarySafetyMargin));
}

}  // namespace

std::string oversized_placeholder(std::string_view role, std::int64_t tokens) {
  return fmt::format("[Large {} (~{}K tokens) omitted from summary]", role, (tokens + 500) / 1000);
}

std::vector<boost::json::object> replace_oversized(std::span<const boost::json::object> messages,
                                                   std::int64_t context_window) {
  std::vector<boost::json::object> out;
  out.reserve(messages.size());
  for (const auto& m : messages) {
    const std::int64_t tokens = estimate_tokens(m);
    if (with_margin(tokens) * 2 <= context_window) {
      out.push_back(m);
      continue;
    }
    boost::json::object placeholder;
    placeholder["role"] = "user";
    placeholder["content"] = oversized_placeholder(json::get_string(m, "role").value_or("message"), tokens);
    if (const auto* ts = m.if_contains("timestamp")) placeholder["timestamp"] = *ts;
    out.push_back(std::move(placeholder));
  }
  return out;
}

std::int64_t chunk_budget_tokens(std::int64_t context_window, std::int64_t max_tokens) {
  const std::int64_t overhead = std::min(kSummaryOverheadTokens, context_window / 4);
  const std::int64_t room = context_window - 2 * std::max<std::int64_t>(0, max_tokens) - overhead;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(room) / kSummarySafetyMargin));
}

std::vector<std::vector<boost::json::object>> chunk_messages(std::span<const boost::json::object> messages,
                                                             std::int64_t budget_tokens) {
  std::vector<std::vector<boost::json::object>> chunks;
  std::int64_t used = 0;
  for (const auto& m : messages) {
    const std::int64_t tokens = with_margin(estimate_tokens(m));
    if (chunks.empty() || (used + tokens > budget_tokens && !chunks.back().empty())) {
      chunks.emplace_back();
      used = 0;
    }
    chunks.back().push_back(m);
    used += tokens;
  }
  return chunks;
}

}  // namespace sessionrt::actors
