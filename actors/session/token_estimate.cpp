#include "actors/session/token_estimate.hpp"

#include "messages/utf8.hpp"

#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::actors {
namespace {

std::int64_t string_chars(const boost::json::object& o, std::string_view key) {
  auto s = json::get_string(o, key);
  return s ? static_cast<std::int64_t>(utf16_length(*s)) : 0;
}

// A token count read from a file: truncated toward zero and kept within JavaScript's safe
// integers, so sums of a few counts cannot overflow.
std::int64_t token_count(double d) {
  constexpr double kMaxSafe = 9007199254740991.0;  // 2^53 - 1
  if (!(d > -kMaxSafe)) return -static_cast<std::int64_t>(kMaxSafe);
  if (!(d < kMaxSafe)) return static_cast<std::int64_t>(kMaxSafe);
  return static_cast<std::int64_t>(d);
}

std::int64_t number_or_zero(const boost::json::object& o, std::string_view key) {
  auto n = json::get_number(o, key);
  return n ? token_count(*n) : 0;
}

bool has_type(const boost::json::object& block, std::string_view type) {
  auto t = json::get_string(block, "type");
  return t && *t == type;
}

// Text blocks (and, with count_images, image blocks) of a content array or string.
std::int64_t content_chars(const boost::json::value* content, bool count_images) {
  if (content == nullptr) return 0;
  if (const auto* s = content->if_string()) return static_cast<std::int64_t>(utf16_length(*s));
  const auto* blocks = content->if_array();
  if (blocks == nullptr) return 0;
  std::int64_t chars = 0;
  for (const auto& v : *blocks) {
    const auto* block = v.if_object();
    if (block == nullptr) continue;
    if (has_type(*block, "text")) chars += string_chars(*block, "text");
    if (count_images && has_type(*block, "image")) chars += kImageEstimateChars;
  }
  return chars;
}

std::int64_t assistant_chars(const boost::json::object& message) {
  const auto* blocks = json::get_array(message, "content");
  if (blocks == nullptr) return 0;
  std::int64_t chars = 0;
  for (const auto& v : *blocks) {
    const auto* block = v.if_object();
    if (block == nullptr) continue;
    if (has_type(*block, "text")) {
      chars += string_chars(*block, "text");
    } else if (has_type(*block, "thinking")) {
      chars += string_chars(*block, "thinking");
    } else if (has_type(*block, "toolCall")) {
      chars += string_chars(*block, "name");
      if (const auto* args = json::find(*block, "arguments"))
        chars += static_cast<std::int64_t>(utf16_length(json::to_compact(*args)));
    }
  }
  return chars;
}

std::int64_t message_chars(const boost::json::object& message) {
  auto role = json::get_string(message, "role").value_or("");
  if (role == "user") return content_chars(json::find(message, "content"), /*count_images=*/true);
  if (role == "assistant") return assistant_chars(message);
  if (role == "custom" || role == "toolResult")
    return content_chars(json::find(message, "content"), /*count_images=*/true);
  if (role == "bashExecution") return string_chars(message, "command") + string_chars(message, "output");
  if (role == "branchSummary" || role == "compactionSummary") return string_chars(message, "summary");
  return 0;
}

// getAssistantUsage: an assistant message, not aborted/error, with a usage object.
const boost::json::object* valid_assistant_usage(const boost::json::object& message) {
  if (json::get_string(message, "role").value_or("") != "assistant") return nullptr;
  auto stop = json::get_string(message, "stopReason").value_or("");
  if (stop == "aborted" || stop == "error") return nullptr;
  return json::get_object(message, "usage");
}

}  // namespace

std::int64_t estimate_text_tokens(std::string_view text) {
  return (static_cast<std::int64_t>(utf16_length(text)) + 3) / 4;
}

std::int64_t estimate_tokens(const boost::json::object& message) {
  std::int64_t chars = message_chars(message);
  return (chars + 3) / 4;
}

std::int64_t calculate_context_tokens(const boost::json::object& usage) {
  if (const auto* context = json::get_object(usage, "contextUsage")) {
    auto state = json::get_string(*context, "state");
    auto total = json::get_number(*context, "totalTokens");
    if (state && *state == "available" && total) return token_count(*total);
  }
  if (std::int64_t total = number_or_zero(usage, "totalTokens"); total != 0) return total;
  return number_or_zero(usage, "input") + number_or_zero(usage, "output") + number_or_zero(usage, "cacheRead") +
         number_or_zero(usage, "cacheWrite");
}

std::int64_t prompt_tokens_of_usage(const boost::json::object& usage) {
  return number_or_zero(usage, "input") + number_or_zero(usage, "cacheRead") + number_or_zero(usage, "cacheWrite");
}

namespace {
// Over any random-access sequence; `at(i)` gives message i or null (a non-object element).
template <class At>
context_token_estimate estimate_over(std::size_t n, At at) {
  context_token_estimate out;
  std::size_t first_trailing = 0;
  for (std::size_t i = n; i-- > 0;) {
    const boost::json::object* m = at(i);
    if (!m) continue;
    if (const auto* usage = valid_assistant_usage(*m)) {
      out.usage_tokens = calculate_context_tokens(*usage);
      out.last_usage_index = i;
      first_trailing = i + 1;
      break;
    }
  }
  for (std::size_t i = first_trailing; i < n; ++i)
    if (const boost::json::object* m = at(i)) out.trailing_tokens += estimate_tokens(*m);
  out.tokens = out.usage_tokens + out.trailing_tokens;
  return out;
}
}  // namespace

context_token_estimate estimate_context_tokens(std::span<const boost::json::object> messages) {
  return estimate_over(messages.size(), [&](std::size_t i) { return &messages[i]; });
}

context_token_estimate estimate_context_tokens(const boost::json::array& messages) {
  return estimate_over(messages.size(), [&](std::size_t i) { return messages[i].if_object(); });
}

}  // namespace sessionrt::actors
