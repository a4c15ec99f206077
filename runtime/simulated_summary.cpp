#include "runtime/simulated_summary.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "actors/session/summary_prompt.hpp"
#include "messages/ascii_text.hpp"
#include "messages/js_text.hpp"
#include "runtime/simulated_text.hpp"

namespace sessionrt::runtime {

namespace {

using sim_text::capped;
using sim_text::contains;
using sim_text::first_nonempty_line;
using sim_text::lines_of;

constexpr std::size_t kMaxItemUnits = 120;  // UTF-16 units of one summary item
constexpr std::size_t kMaxDoneItems = 20;
constexpr std::size_t kMaxListItems = 8;    // goals, constraints, decisions, early progress

// The text between `open` and the last `close` after it; nullopt without `open`.
std::optional<std::string_view> tagged(std::string_view text, std::string_view open, std::string_view close,
                                       std::size_t from = 0) {
  auto start = text.find(open, from);
  if (start == std::string_view::npos) return std::nullopt;
  start += open.size();
  auto end = text.rfind(close);
  if (end == std::string_view::npos || end < start) end = text.size();
  return text.substr(start, end - start);
}

// ---------- summaries ----------

enum class part_kind { user, assistant, thinking, tool_calls, tool_result };

struct part {
  part_kind kind;
  std::string line;  // first non-empty line, capped
};

constexpr std::array<std::pair<std::string_view, part_kind>, 5> kPartPrefixes = {{
    {"[User]: ", part_kind::user},
    {"[Assistant]: ", part_kind::assistant},
    {"[Assistant thinking]: ", part_kind::thinking},
    {"[Assistant tool calls]: ", part_kind::tool_calls},
    {"[Tool result]: ", part_kind::tool_result},
}};

std::optional<std::pair<part_kind, std::string_view>> part_start(std::string_view line) {
  for (const auto& [prefix, kind] : kPartPrefixes)
    if (line.starts_with(prefix)) return std::pair{kind, line.substr(prefix.size())};
  return std::nullopt;
}

// The parts of a serialized conversation, each with its first non-empty line.
std::vector<part> parts_of(std::string_view conversation) {
  std::vector<part> parts;
  for (auto line : lines_of(conversation)) {
    if (auto start = part_start(line)) {
      parts.push_back({start->first, capped(js_trim(start->second), kMaxItemUnits)});
    } else if (!parts.empty() && parts.back().line.empty()) {
      parts.back().line = capped(js_trim(line), kMaxItemUnits);
    }
  }
  return parts;
}

std::vector<std::string> lines_of_kind(const std::vector<part>& parts, part_kind kind) {
  std::vector<std::string> out;
  for (const auto& p : parts)
    if (p.kind == kind) out.push_back(p.line.empty() ? "(empty message)" : p.line);
  return out;
}

std::size_t count_of_kind(const std::vector<part>& parts, part_kind kind) {
  auto of_kind = [&](const part& p) { return p.kind == kind; };
  return static_cast<std::size_t>(std::count_if(parts.begin(), parts.end(), of_kind));
}

// The trimmed non-empty lines under the heading line `heading`, up to the next heading.
std::vector<std::string_view> section_lines(std::string_view summary, std::string_view heading) {
  std::vector<std::string_view> out;
  bool inside = false;
  for (auto raw : lines_of(summary)) {
    auto line = js_trim(raw);
    if (line.starts_with("#")) {
      if (inside) break;
      inside = line == heading;
    } else if (inside && !line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

bool is_placeholder(std::string_view item) { return item == "(none)" || item.ends_with("items omitted)"); }

// Items of a previous summary's section: lines starting with `marker`, placeholders dropped.
std::vector<std::string> carried_items(std::string_view summary, std::string_view heading, std::string_view marker) {
  std::vector<std::string> out;
  for (auto line : section_lines(summary, heading)) {
    if (!line.starts_with(marker)) continue;
    auto item = js_trim(line.substr(marker.size()));
    if (!item.empty() && !is_placeholder(item)) out.emplace_back(item);
  }
  return out;
}

void append_new(std::vector<std::string>& items, const std::vector<std::string>& more) {
  for (const auto& m : more)
    if (std::find(items.begin(), items.end(), m) == items.end()) items.push_back(m);
}

// The last `cap` items; how many were dropped.
std::size_t keep_last(std::vector<std::string>& items, std::size_t cap) {
  if (items.size() <= cap) return 0;
  std::size_t dropped = items.size() - cap;
  items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(dropped));
  return dropped;
}

std::string bullet_list(const std::vector<std::string>& items, std::string_view marker) {
  if (items.empty()) return "- (none)\n";
  std::string out;
  for (const auto& item : items) out += std::string(marker) + item + "\n";
  return out;
}

bool states_constraint(std::string_view line) {
  auto lower = ascii_lower(line);
  for (std::string_view word : {"must ", "never ", "always ", "prefer", "don't ", "do not ", "only "})
    if (contains(lower, word)) return true;
  return false;
}

struct summary_parts {
  std::vector<std::string> goals, constraints, done, in_progress, decisions;
  std::size_t done_dropped = 0;
};

summary_parts collect(const summary_source& source, const std::vector<part>& parts) {
  summary_parts s;
  auto users = lines_of_kind(parts, part_kind::user);
  bool ends_with_user = !parts.empty() && parts.back().kind == part_kind::user;

  s.goals = carried_items(source.previous_summary, "## Goal", "");
  if (!users.empty()) append_new(s.goals, {users.front()});
  keep_last(s.goals, kMaxListItems);

  s.constraints = carried_items(source.previous_summary, "## Constraints & Preferences", "- ");
  for (const auto& u : users)
    if (states_constraint(u)) append_new(s.constraints, {u});
  keep_last(s.constraints, kMaxListItems);

  // Earlier work in progress counts as done once the conversation went on.
  s.done = carried_items(source.previous_summary, "### Done", "- [x] ");
  auto earlier_in_progress = carried_items(source.previous_summary, "### In Progress", "- [ ] ");
  auto& progress_target = parts.empty() ? s.in_progress : s.done;
  progress_target.insert(progress_target.end(), earlier_in_progress.begin(), earlier_in_progress.end());
  if (ends_with_user) {
    s.in_progress.push_back(users.back());
    users.pop_back();
  }
  s.done.insert(s.done.end(), users.begin(), users.end());
  s.done_dropped = keep_last(s.done, kMaxDoneItems);

  s.decisions = carried_items(source.previous_summary, "## Key Decisions", "- ");
  auto answers = lines_of_kind(parts, part_kind::assistant);
  if (!answers.empty()) append_new(s.decisions, {"**Answered**: " + answers.back()});
  keep_last(s.decisions, kMaxListItems);
  return s;
}

std::string done_section(const summary_parts& s) {
  std::string out = "### Done\n";
  if (s.done_dropped > 0) out += "- (" + std::to_string(s.done_dropped) + " earlier items omitted)\n";
  if (s.done.empty() && s.done_dropped == 0) return out + "- (none)\n";
  return out + bullet_list(s.done, "- [x] ");
}

std::string critical_context(const summary_source& source, const std::vector<part>& parts) {
  std::string out = "- Summarized " + std::to_string(count_of_kind(parts, part_kind::user)) + " user messages, " +
                    std::to_string(count_of_kind(parts, part_kind::assistant)) + " assistant replies, " +
                    std::to_string(count_of_kind(parts, part_kind::tool_calls)) + " tool call groups, " +
                    std::to_string(count_of_kind(parts, part_kind::tool_result)) + " tool results.\n";
  // OpenClaw puts the user's /compact instructions after its identifier sentence.
  constexpr std::string_view user_focus = "Additional focus:\n";
  auto focus_text = source.focus;
  if (auto at = focus_text.find(user_focus); at != std::string_view::npos)
    focus_text.remove_prefix(at + user_focus.size());
  if (auto focus = first_nonempty_line(focus_text); !focus.empty())
    out += "- Focus: " + capped(focus, kMaxItemUnits) + "\n";
  return out;
}

std::string history_summary(const summary_source& source, const std::vector<part>& parts) {
  auto s = collect(source, parts);
  std::string out = "## Goal\n";
  out += s.goals.empty() ? std::string("(none)\n") : bullet_list(s.goals, "");
  out += "\n## Constraints & Preferences\n" + bullet_list(s.constraints, "- ");
  out += "\n## Progress\n" + done_section(s);
  out += "\n### In Progress\n";
  out += s.in_progress.empty() ? std::string("- (none)\n") : bullet_list(s.in_progress, "- [ ] ");
  out += "\n### Blocked\n- (none)\n";
  out += "\n## Key Decisions\n" + bullet_list(s.decisions, "- ");
  out += "\n## Next Steps\n";
  out += s.in_progress.empty() ? std::string("1. Wait for the next user message.\n")
                               : "1. Continue with: " + s.in_progress.front() + "\n";
  out += "\n## Critical Context\n" + critical_context(source, parts);
  return out;
}

std::string turn_prefix_summary(const summary_source& source, const std::vector<part>& parts) {
  auto users = lines_of_kind(parts, part_kind::user);
  std::vector<std::string> progress;
  for (const auto& p : parts)
    if (p.kind == part_kind::assistant || p.kind == part_kind::tool_calls) progress.push_back(p.line);
  keep_last(progress, kMaxListItems);
  std::string out = "## Original Request\n" + (users.empty() ? std::string("(none)") : users.front()) + "\n";
  out += "\n## Early Progress\n" + bullet_list(progress, "- ");
  out += "\n## Context for Suffix\n" + critical_context(source, parts);
  return out;
}

status cancelled_status() { return status(errc::cancelled, "simulated compaction provider: cancelled by the caller"); }

}  // namespace

std::string simulated_summary(const summary_source& source, std::int64_t max_tokens) {
  auto parts = parts_of(source.conversation);
  auto text = source.turn_prefix ? turn_prefix_summary(source, parts) : history_summary(source, parts);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return truncate_to_tokens(text, max_tokens);
}

summary_source summary_source_of(std::string_view user_text) {
  summary_source source;
  constexpr std::string_view close = "\n</conversation>";
  auto conversation = tagged(user_text, "<conversation>\n", close);
  source.conversation = conversation.value_or(user_text);
  std::size_t tail = conversation ? user_text.rfind(close) : user_text.size();
  if (tail == std::string_view::npos) tail = user_text.size();
  auto rest = user_text.substr(tail);
  source.previous_summary = tagged(rest, "<previous-summary>\n", "\n</previous-summary>").value_or("");
  constexpr std::string_view focus_label = "\n\nAdditional focus: ";
  if (auto at = rest.find(focus_label); at != std::string_view::npos)
    source.focus = rest.substr(at + focus_label.size());
  source.turn_prefix = contains(rest, actors::kTurnPrefixSummarizationPrompt);
  return source;
}

// ---------- simulated_compaction_provider ----------

result<std::string> simulated_compaction_provider::summarize(const summarize_request& request,
                                                             const cancellation& cancel) {
  calls_.fetch_add(1);
  if (cancel.cancelled()) return cancelled_status();
  {
    std::lock_guard lock(mutex_);
    if (mode_ == mode::fail) return error_;
    if (mode_ == mode::empty) return std::string();
  }
  std::vector<boost::json::object> messages;
  for (const auto& v : request.messages)
    if (const auto* m = v.if_object()) messages.push_back(*m);
  auto llm = actors::convert_to_llm(messages);
  if (stop_after("convert", cancel)) return cancelled_status();
  auto conversation = actors::serialize_conversation(llm);
  if (stop_after("serialize", cancel)) return cancelled_status();
  summary_source source{conversation, request.previous_summary, request.custom_instructions};
  auto summary = simulated_summary(source, request.max_tokens);
  if (stop_after("summarize", cancel)) return cancelled_status();
  return summary;
}

void simulated_compaction_provider::fail_with(status error) {
  std::lock_guard lock(mutex_);
  error_ = std::move(error);
  mode_ = error_.ok() ? mode::summarize : mode::fail;
}

void simulated_compaction_provider::return_empty() {
  std::lock_guard lock(mutex_);
  mode_ = mode::empty;
}

void simulated_compaction_provider::succeed() {
  std::lock_guard lock(mutex_);
  mode_ = mode::summarize;
}

void simulated_compaction_provider::observe_steps(step_observer observer) {
  std::lock_guard lock(mutex_);
  observer_ = std::move(observer);
}

bool simulated_compaction_provider::stop_after(std::string_view step, const cancellation& cancel) {
  step_observer observer;
  {
    std::lock_guard lock(mutex_);
    observer = observer_;
  }
  if (observer) observer(step);
  return cancel.cancelled();
}

}  // namespace sessionrt::runtime
