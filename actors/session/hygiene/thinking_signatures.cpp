#include "actors/session/hygiene/thinking_signatures.hpp"

#include "actors/session/hygiene/image_sanitizer.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool has_valid_signature(const boost::json::object& b) {
  for (const char* key : {"thinkingSignature", "signature"}) {
    const auto* v = b.if_contains(key);
    if (v && v->is_string() && !is_js_blank(v->get_string())) return true;
  }
  return false;
}

std::optional<std::int64_t> timestamp_of(const boost::json::object& m) {
  const auto* ts = m.if_contains("timestamp");
  if (!ts) return std::nullopt;
  if (auto n = json::as_number(*ts)) return static_cast<std::int64_t>(*n);
  return std::nullopt;
}

// Removes the thinking blocks `drop` selects; an emptied assistant gets the placeholder.
template <class Pred>
void drop_thinking(boost::json::value& mv, Pred&& drop, std::size_t& counter, hygiene_report& report) {
  auto* content = content_array(mv);
  if (!content) return;
  bool removed = false;
  for (std::size_t k = content->size(); k-- > 0;) {
    const auto& b = (*content)[k];
    if (!is_thinking_block(b) || !drop(b.get_object())) continue;
    content->erase(content->begin() + static_cast<std::ptrdiff_t>(k));
    ++counter;
    removed = true;
  }
  if (removed && content->empty()) {
    content->push_back(boost::json::value(text_block(kOmittedReasoningText)));
    ++report.reasoning_placeholders;
  }
}

}  // namespace

bool is_thinking_block(const boost::json::value& block) {
  const auto t = block_type(block);
  return t == "thinking" || t == "redacted_thinking" || t == "reasoning";
}

void clean_thinking(boost::json::array& messages, const transcript_policy& policy,
                    std::optional<std::int64_t> latest_compaction_ms, hygiene_report& report) {
  std::size_t latest_assistant = messages.size(), last_user = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (latest_assistant == messages.size() && is_role(messages[i], "assistant")) latest_assistant = i;
    if (last_user == messages.size() && is_role(messages[i], "user")) last_user = i;
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& mv = messages[i];
    if (!is_role(mv, "assistant")) continue;
    if (policy.preserve_signatures) {
      const auto ts = timestamp_of(mv.get_object());
      const bool pre_compaction = latest_compaction_ms && ts && *ts <= *latest_compaction_ms;
      const bool latest = i == latest_assistant;
      drop_thinking(
          mv, [&](const boost::json::object& b) { return pre_compaction || (!latest && !has_valid_signature(b)); },
          report.signatures_stripped, report);
    }
    if (policy.sanitize_thought_signatures) {
      if (auto* content = content_array(mv)) {
        for (auto& b : *content) {
          if (!b.is_object()) continue;
          auto& o = b.get_object();
          for (const char* key : {"thinkingSignature", "thoughtSignature", "thought_signature"}) {
            const auto* v = o.if_contains(key);
            if (!v) continue;
            if (v->is_string() && decode_base64(v->get_string())) continue;
            json::erase(o, key);
            ++report.thought_signatures_dropped;
          }
        }
      }
    }
    if (policy.drop_thinking_blocks || (policy.drop_reasoning_from_history && i < last_user && last_user != messages.size()))
      drop_thinking(mv, [](const boost::json::object&) { return true; }, report.thinking_blocks_dropped, report);
  }
}

}  // namespace sessionrt::actors::hygiene
