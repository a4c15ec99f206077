#include "actors/session/hygiene/tool_result_pairing.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/replay_normalizer.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors::hygiene {
namespace {

struct call_ref {
  std::size_t block = 0;  // index in the assistant's content
  std::string id;
  std::string name;
  std::optional<std::size_t> result;  // index in the input
};

boost::json::object synthetic_result(const call_ref& call, std::int64_t ts, bool aborted_text) {
  boost::json::object r;
  r["role"] = "toolResult";
  r["toolCallId"] = call.id;
  r["toolName"] = call.name.empty() ? std::string("unknown") : call.name;
  r["content"] = single_text(aborted_text ? std::string_view("aborted") : kMissingToolResultText);
  boost::json::object details;
  details["openclawSyntheticMissingToolResult"] = true;
  r["details"] = std::move(details);
  r["isError"] = true;
  r["timestamp"] = ts;
  return r;
}

std::int64_t timestamp_or(const boost::json::object& m, std::int64_t fallback) {
  if (const auto* ts = m.if_contains("timestamp"))
    if (auto n = json::as_int(*ts)) return *n;
  return fallback;
}

}  // namespace

std::size_t strip_tool_result_details(boost::json::array& messages) {
  std::size_t n = 0;
  for (auto& mv : messages) {
    if (!is_role(mv, "toolResult")) continue;
    auto& m = mv.get_object();
    if (!m.contains("details")) continue;
    json::erase(m, "details");
    ++n;
  }
  return n;
}

void repair_tool_result_pairing(boost::json::array& messages, const transcript_policy& policy,
                                const hygiene_options& options, hygiene_report& report) {
  boost::json::array in = std::move(messages);
  const std::size_t n = in.size();
  std::vector<bool> consumed(n, false), assistant_with_calls(n, false);
  std::unordered_map<std::string, std::vector<std::size_t>> results_by_id, callers_by_id;
  for (std::size_t i = 0; i < n; ++i) {
    assistant_with_calls[i] = has_tool_calls(in[i]);
    if (assistant_with_calls[i])
      for (const auto& b : *content_array(in[i]))
        if (auto id = tool_call_id(b); id) {
          auto& list = callers_by_id[std::string(*id)];
          if (list.empty() || list.back() != i) list.push_back(i);
        }
    if (!is_role(in[i], "toolResult")) continue;
    if (auto id = tool_result_id(in[i])) results_by_id[*id].push_back(i);
  }
  static const std::vector<std::size_t> none;
  auto candidates = [&](const std::string& id) -> const std::vector<std::size_t>& {
    auto it = results_by_id.find(id);
    return it == results_by_id.end() ? none : it->second;
  };

  boost::json::array out;
  out.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    if (consumed[i]) continue;
    if (is_role(in[i], "toolResult")) {
      ++report.orphan_results_dropped;
      continue;
    }
    if (!assistant_with_calls[i]) {
      out.push_back(std::move(in[i]));
      continue;
    }
    std::size_t end = i + 1;
    while (end < n && !assistant_with_calls[end]) ++end;
    auto& assistant = in[i].get_object();
    const auto stop = string_field(assistant, "stopReason");
    const bool errored = stop == "error" || stop == "aborted";
    auto& content = assistant["content"].get_array();

    std::vector<call_ref> calls;
    for (std::size_t k = 0; k < content.size(); ++k) {
      auto id = tool_call_id(content[k]);
      if (!id) continue;
      calls.push_back({k, std::string(*id), std::string(js_trim(string_field(content[k].get_object(), "name"))), {}});
    }
    // Legacy results without an id: adopted by the one call with their tool name.
    for (std::size_t k = i + 1; k < end; ++k) {
      if (consumed[k] || !is_role(in[k], "toolResult") || tool_result_id(in[k])) continue;
      const auto name = js_trim(string_field(in[k].get_object(), "toolName"));
      std::size_t matches = 0;
      const call_ref* match = nullptr;
      for (const auto& c : calls)
        if (!name.empty() && c.name == name) ++matches, match = &c;
      if (matches != 1) continue;
      set_tool_result_id(in[k].get_object(), match->id);
      auto& list = results_by_id[match->id];
      list.insert(std::upper_bound(list.begin(), list.end(), k), k);
    }

    for (auto& c : calls) {
      const auto& cand = candidates(c.id);
      auto first = [&](std::size_t from, std::size_t to, bool synthetic) -> std::optional<std::size_t> {
        for (std::size_t k : cand)
          if (k >= from && k < to && !consumed[k] && is_synthetic_tool_result(in[k]) == synthetic) return k;
        return std::nullopt;
      };
      c.result = first(i + 1, end, false);
      if (!c.result && !errored) {
        // Displaced: later, but before the next assistant that calls the same id again.
        std::size_t bound = n;
        if (auto it = callers_by_id.find(c.id); it != callers_by_id.end()) {
          auto next = std::upper_bound(it->second.begin(), it->second.end(), i);
          if (next != it->second.end()) bound = *next;
        }
        c.result = first(end, bound, false);
        if (c.result) ++report.displaced_results_moved;
      }
      if (c.result) {
        // A real result takes the place of a synthetic one in the span.
        while (auto s = first(i + 1, end, true)) {
          consumed[*s] = true;
          ++report.synthetic_results_replaced;
        }
      } else {
        c.result = first(i + 1, end, true);
      }
      if (c.result) consumed[*c.result] = true;
    }
    // Whatever else in the span answers these calls is a duplicate.
    for (const auto& c : calls)
      for (std::size_t k : candidates(c.id))
        if (k > i && k < end && !consumed[k]) {
          consumed[k] = true;
          ++report.duplicate_results_dropped;
        }
    if (errored && policy.errored_results == errored_result_policy::drop) {
      for (auto& c : calls)
        if (c.result) {
          c.result.reset();
          ++report.errored_results_dropped;
        }
    }

    const std::int64_t ts = options.now_ms ? options.now_ms : timestamp_or(assistant, 0);
    std::vector<boost::json::value> results;
    std::vector<std::size_t> remove_blocks;
    for (auto& c : calls) {
      if (c.result) {
        results.push_back(std::move(in[*c.result]));
      } else if (!errored && policy.allow_synthetic_tool_results) {
        results.emplace_back(synthetic_result(c, ts, policy.missing_result_aborted_text));
        ++report.synthetic_results_inserted;
      } else {
        remove_blocks.push_back(c.block);
        ++report.unanswered_calls_removed;
      }
    }
    for (auto k = remove_blocks.rbegin(); k != remove_blocks.rend(); ++k)
      content.erase(content.begin() + static_cast<std::ptrdiff_t>(*k));
    if (has_no_content(in[i])) {
      if (!errored) {
        ++report.empty_assistants_dropped;
        continue;
      }
      json::set(assistant, "content", single_text(kFailedAssistantText));
    }
    out.push_back(std::move(in[i]));
    for (auto& r : results) out.push_back(std::move(r));
  }
  messages = std::move(out);
}

}  // namespace sessionrt::actors::hygiene
