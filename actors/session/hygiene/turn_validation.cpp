#include "actors/session/hygiene/turn_validation.hpp"

#include <unordered_set>

#include "actors/session/hygiene/replay_message.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors::hygiene {
namespace {

boost::json::array blocks_of(boost::json::value& message) {
  auto& m = message.get_object();
  auto* c = m.if_contains("content");
  if (!c) return {};
  if (c->is_array()) return std::move(c->get_array());
  if (c->is_string()) {
    boost::json::array a;
    if (!c->get_string().empty()) a.push_back(boost::json::value(text_block(c->get_string())));
    return a;
  }
  return {};
}

// `later` absorbs `earlier`'s content in front of its own.
void merge_into(boost::json::value& earlier, boost::json::value& later) {
  boost::json::array merged = blocks_of(earlier);
  boost::json::array tail = blocks_of(later);
  for (auto& b : tail) merged.push_back(std::move(b));
  auto& l = later.get_object();
  const bool had_ts = l.contains("timestamp") && !l.at("timestamp").is_null();
  l["content"] = std::move(merged);
  if (!had_ts)
    if (const auto* ts = earlier.get_object().if_contains("timestamp")) l["timestamp"] = *ts;
}

}  // namespace

void apply_google_turn_ordering(boost::json::array& messages, hygiene_report& report) {
  if (messages.empty() || !is_role(messages.front(), "assistant")) return;
  boost::json::object boot;
  boot["role"] = "user";
  boot["content"] = kSessionBootstrapText;
  messages.insert(messages.begin(), boost::json::value(std::move(boot)));
  ++report.bootstrap_inserted;
}

void merge_consecutive(boost::json::array& messages, std::string_view role, std::size_t& merged) {
  boost::json::array out;
  out.reserve(messages.size());
  for (auto& mv : messages) {
    if (!out.empty() && is_role(mv, role) && is_role(out.back(), role)) {
      merge_into(out.back(), mv);
      out.back() = std::move(mv);
      ++merged;
      continue;
    }
    out.push_back(std::move(mv));
  }
  messages = std::move(out);
}

void strip_dangling_tool_uses(boost::json::array& messages, hygiene_report& report) {
  boost::json::array out;
  out.reserve(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto& mv = messages[i];
    if (has_tool_calls(mv)) {
      std::unordered_set<std::string> answered;
      for (std::size_t k = i + 1; k < messages.size() && !is_role(messages[k], "assistant"); ++k)
        if (is_role(messages[k], "toolResult"))
          if (auto id = tool_result_id(messages[k])) answered.insert(*id);
      auto* content = content_array(mv);
      for (std::size_t k = content->size(); k-- > 0;) {
        auto id = tool_call_id((*content)[k]);
        if (!is_tool_call_block((*content)[k]) || (id && answered.count(std::string(*id)))) continue;
        content->erase(content->begin() + static_cast<std::ptrdiff_t>(k));
        ++report.dangling_tool_uses_dropped;
      }
      if (has_no_content(mv)) {
        ++report.empty_assistants_dropped;
        continue;
      }
    }
    out.push_back(std::move(mv));
  }
  messages = std::move(out);
}

void validate_turns(boost::json::array& messages, const transcript_policy& policy, hygiene_report& report) {
  if (policy.apply_google_turn_ordering) apply_google_turn_ordering(messages, report);
  if (policy.validate_gemini_turns || policy.validate_anthropic_turns)
    merge_consecutive(messages, "assistant", report.assistant_turns_merged);
  if (policy.validate_anthropic_turns) {
    strip_dangling_tool_uses(messages, report);
    // Dropping an emptied assistant can make assistants or users adjacent again.
    merge_consecutive(messages, "assistant", report.assistant_turns_merged);
    merge_consecutive(messages, "user", report.user_turns_merged);
  }
}

}  // namespace sessionrt::actors::hygiene
