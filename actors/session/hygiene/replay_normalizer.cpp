#include "actors/session/hygiene/replay_normalizer.hpp"

#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/silent_reply.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool is_mirror(const boost::json::object& m) {
  if (js_trim(string_field(m, "provider")) != "openclaw") return false;
  const auto model = js_trim(string_field(m, "model"));
  return model == "delivery-mirror" || model == "gateway-injected";
}

bool zero_usage(const boost::json::object& m) {
  const auto* usage = json::get_object(m, "usage");
  if (!usage) return false;
  for (auto key : {"input", "output", "cacheRead", "cacheWrite", "totalTokens"})
    if (json::get_number(*usage, key).value_or(0) != 0) return false;
  return true;
}

bool reasoning_only(const boost::json::array& content) {
  if (content.empty()) return false;
  for (const auto& b : content) {
    const auto t = block_type(b);
    if (t != "thinking" && t != "redacted_thinking" && t != "reasoning" && !is_blank_text_block(b)) return false;
  }
  return true;
}

bool is_error_sentinel(const boost::json::value& mv) {
  if (!is_role(mv, "assistant")) return false;
  const auto& m = mv.get_object();
  if (string_field(m, "stopReason") != "error") return false;
  const auto* content = content_array(mv);
  if (!content) return has_no_content(mv);
  for (const auto& b : *content) {
    if (is_blank_text_block(b)) continue;
    if (block_type(b) != "text" || string_field(b.get_object(), "text") != kFailedAssistantText) return false;
  }
  return true;
}

}  // namespace

void normalize_assistant_replay(boost::json::array& messages, hygiene_report& report) {
  boost::json::array out;
  out.reserve(messages.size());
  for (auto& mv : messages) {
    const auto role = role_of(mv);
    if (role == "user") {
      if (has_no_content(mv)) {
        ++report.blank_users_dropped;
        continue;
      }
      out.push_back(std::move(mv));
      continue;
    }
    if (role != "assistant") {
      out.push_back(std::move(mv));
      continue;
    }
    auto& m = mv.get_object();
    if (is_mirror(m)) {
      ++report.mirrors_dropped;
      continue;
    }
    if (auto* content = content_array(mv)) {
      for (std::size_t k = content->size(); k-- > 0;) {
        const auto& b = (*content)[k];
        if (block_type(b) != "text") continue;
        auto text = json::get_string(b.get_object(), "text");
        if (text && is_silent_reply_payload_text(*text)) {
          content->erase(content->begin() + static_cast<std::ptrdiff_t>(k));
          ++report.silent_blocks_dropped;
        }
      }
      if (string_field(m, "stopReason") == "length" && reasoning_only(*content)) {
        ++report.reasoning_only_length_dropped;
        continue;
      }
    }
    const auto stop = string_field(m, "stopReason");
    if (has_no_content(mv) && (stop == "error" || zero_usage(m))) {
      json::set(m, "content", single_text(kFailedAssistantText));
      ++report.error_turns_rewritten;
    }
    out.push_back(std::move(mv));
  }
  while (!out.empty() && is_error_sentinel(out.back())) {
    out.pop_back();
    ++report.trailing_error_sentinels_popped;
  }
  messages = std::move(out);
}

}  // namespace sessionrt::actors::hygiene
