#include "actors/session/hygiene/tool_call_inputs.hpp"

#include "actors/session/hygiene/replay_message.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors::hygiene {
namespace {

// Whether a tool-call block may stay; trims its name.
bool keep_call(boost::json::object& b, const transcript_policy& policy, const hygiene_options& options,
               hygiene_report& report) {
  if (!b.contains("arguments") && !b.contains("input")) return false;
  auto id = json::get_string(b, "id");
  if (!id || id->empty()) return false;
  if (b.contains("partialJson") &&
      !(policy.family == policy_family::openai_responses && id->find('|') != std::string_view::npos))
    return false;
  auto* name = b.if_contains("name");
  if (!name || !name->is_string()) return false;
  const std::string_view raw = name->get_string();
  const std::string_view trimmed = js_trim(raw);
  if (trimmed.empty()) return false;
  if (!options.allowed_tool_names.empty() && !options.allowed_tool_names.count(std::string(trimmed))) return false;
  if (trimmed.size() != raw.size()) {
    *name = boost::json::string(trimmed);
    ++report.tool_names_trimmed;
  }
  return true;
}

}  // namespace

void sanitize_tool_call_inputs(boost::json::array& messages, const transcript_policy& policy,
                               const hygiene_options& options, hygiene_report& report) {
  boost::json::array out;
  out.reserve(messages.size());
  for (auto& mv : messages) {
    if (!is_role(mv, "assistant")) {
      out.push_back(std::move(mv));
      continue;
    }
    if (auto* content = content_array(mv)) {
      for (std::size_t k = content->size(); k-- > 0;) {
        auto& b = (*content)[k];
        if (!is_tool_call_block(b)) continue;
        if (keep_call(b.get_object(), policy, options, report)) continue;
        content->erase(content->begin() + static_cast<std::ptrdiff_t>(k));
        ++report.tool_calls_dropped;
      }
    }
    if (has_no_content(mv)) {
      ++report.empty_assistants_dropped;
      continue;
    }
    out.push_back(std::move(mv));
  }
  messages = std::move(out);
}

}  // namespace sessionrt::actors::hygiene
