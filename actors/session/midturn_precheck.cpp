#include "actors/session/midturn_precheck.hpp"

#include <algorithm>

#include "actors/session/token_estimate.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

class fixed_precheck final : public context_precheck {
 public:
  fixed_precheck(std::int64_t request_tokens, std::int64_t threshold) : tokens_(request_tokens), threshold_(threshold) {}
  precheck_answer check(const boost::json::array& added) const override { return decide_precheck(tokens_, threshold_, added); }

 private:
  std::int64_t tokens_, threshold_;
};

}  // namespace

precheck_answer decide_precheck(std::int64_t request_tokens, std::int64_t threshold, const boost::json::array& added) {
  precheck_answer a;
  a.threshold = threshold;
  std::int64_t tool_tokens = 0, other_tokens = 0;
  std::size_t tool_results = 0;
  for (const auto& v : added) {
    if (!v.is_object()) continue;
    const std::int64_t t = estimate_tokens(v.get_object());
    if (json::get_string(v.get_object(), "role") == std::optional<std::string_view>("toolResult")) {
      tool_tokens += t;
      ++tool_results;
    } else {
      other_tokens += t;
    }
  }
  a.context_tokens = request_tokens + tool_tokens + other_tokens;
  if (a.context_tokens <= threshold) return a;
  const std::int64_t budget = threshold - request_tokens - other_tokens;  // left for tool results
  if (tool_results > 0 && budget > 0) {
    const auto per_result_chars = static_cast<std::size_t>(budget / static_cast<std::int64_t>(tool_results) * 4);
    if (per_result_chars >= kMinToolResultChars) {
      a.what = precheck_answer::verdict::truncate_tool_results;
      a.max_tool_result_chars = per_result_chars;
      return a;
    }
  }
  a.what = precheck_answer::verdict::compact;
  return a;
}

std::shared_ptr<const context_precheck> make_context_precheck(std::int64_t request_tokens, std::int64_t threshold) {
  return std::make_shared<fixed_precheck>(request_tokens, threshold);
}

}  // namespace sessionrt::actors
