#include "actors/session/hygiene/hygiene_pipeline.hpp"

#include <optional>
#include <span>
#include <vector>

#include "actors/session/hygiene/blank_text.hpp"
#include "actors/session/hygiene/image_sanitizer.hpp"
#include "actors/session/hygiene/provenance_marker.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/replay_normalizer.hpp"
#include "actors/session/hygiene/thinking_signatures.hpp"
#include "actors/session/hygiene/tool_call_ids.hpp"
#include "actors/session/hygiene/tool_call_inputs.hpp"
#include "actors/session/hygiene/tool_result_pairing.hpp"
#include "actors/session/hygiene/turn_validation.hpp"
#include "actors/session/summary_prompt.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool is_llm_role(std::string_view role) { return role == "user" || role == "assistant" || role == "toolResult"; }

std::optional<std::int64_t> latest_compaction(const boost::json::array& messages) {
  std::optional<std::int64_t> latest;
  for (const auto& mv : messages) {
    if (!is_role(mv, "compactionSummary")) continue;
    const auto* ts = mv.get_object().if_contains("timestamp");
    if (!ts) continue;
    if (auto n = json::as_int(*ts); n && (!latest || *n > *latest)) latest = *n;
  }
  return latest;
}

void to_llm_form(boost::json::array& messages, hygiene_report& report) {
  bool any = false;
  for (const auto& mv : messages)
    if (!mv.is_object() || !is_llm_role(role_of(mv))) any = true;
  if (!any) return;
  boost::json::array out;
  out.reserve(messages.size());
  for (auto& mv : messages) {
    if (!mv.is_object()) {
      ++report.converted_messages;
      continue;
    }
    if (is_llm_role(role_of(mv))) {
      out.push_back(std::move(mv));
      continue;
    }
    const boost::json::object one = std::move(mv.get_object());
    auto converted = convert_to_llm(std::span<const boost::json::object>(&one, 1));
    for (auto& c : converted) out.push_back(std::move(c));
    ++report.converted_messages;
  }
  messages = std::move(out);
}

void drop_non_objects(boost::json::array& messages, hygiene_report& report) {
  for (std::size_t k = messages.size(); k-- > 0;)
    if (!messages[k].is_object()) {
      messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(k));
      ++report.converted_messages;
    }
}

}  // namespace

hygiene_report sanitize_for_provider(boost::json::array& messages, const transcript_policy& policy,
                                     const hygiene_options& options) {
  hygiene_report report;
  const auto compaction_ms = options.latest_compaction_ms ? options.latest_compaction_ms : latest_compaction(messages);
  if (options.llm_form) to_llm_form(messages, report);
  else drop_non_objects(messages, report);

  report.provenance_marked = annotate_inter_session_messages(messages);
  normalize_assistant_replay(messages, report);
  sanitize_images(messages, options, report);
  drop_blank_text_blocks(messages, report);
  clean_thinking(messages, policy, compaction_ms, report);
  sanitize_tool_call_inputs(messages, policy, options, report);
  if (policy.sanitize_tool_call_ids && policy.family != policy_family::openai_responses)
    rewrite_tool_call_ids(messages, policy, report);
  if (policy.repair_tool_use_result_pairing) repair_tool_result_pairing(messages, policy, options, report);
  report.result_details_stripped = strip_tool_result_details(messages);
  validate_turns(messages, policy, report);
  return report;
}

}  // namespace sessionrt::actors::hygiene
