#include "actors/session/compaction_planner.hpp"

#include "messages/context_message.hpp"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>

#include "actors/session/token_estimate.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

namespace sessionrt::actors {
namespace {

// --- entries and the messages they stand for (pi messages.js / compaction.js) ---

std::string_view role_name(const boost::json::object& entry) { return role_of(entry).value_or(""); }

bool is_message_entry(const boost::json::object& entry) { return type_of(entry) == entry_type::message; }

// getMessageFromEntryForCompaction: message, custom_message, branch_summary; never a compaction.
std::optional<boost::json::object> message_for_compaction(const boost::json::object& entry) {
  switch (type_of(entry)) {
    case entry_type::message:
      if (const auto* m = message_of(entry)) return *m;
      return std::nullopt;
    case entry_type::custom_message: return custom_context_message(entry);
    case entry_type::branch_summary: return branch_summary_context_message(entry);
    default: return std::nullopt;
  }
}

// buildSessionContext's appendMessage: like the above, but an empty branch summary is skipped.
void append_context_message(std::vector<boost::json::object>& out, const boost::json::object& entry) {
  if (type_of(entry) == entry_type::branch_summary && json::get_string(entry, "summary").value_or("").empty()) return;
  if (auto m = message_for_compaction(entry)) out.push_back(std::move(*m));
}

// The entries from the root to the last entry, following parentId inside `path`.
std::vector<const boost::json::object*> leaf_to_root_order(session_path path) {
  std::unordered_map<std::string_view, const boost::json::object*> by_id;
  for (const auto* e : path)
    if (auto id = id_of(*e)) by_id[*id] = e;
  std::vector<const boost::json::object*> chain;
  for (const auto* e = path.empty() ? nullptr : path.back(); e != nullptr && chain.size() <= path.size();) {
    chain.push_back(e);
    auto parent = parent_id_of(*e);
    auto it = parent ? by_id.find(*parent) : by_id.end();
    e = it == by_id.end() ? nullptr : it->second;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// --- cut point (pi findValidCutPoints / findTurnStartIndex) ---

bool is_valid_cut_point(const boost::json::object& entry) {
  auto type = type_of(entry);
  if (type == entry_type::branch_summary || type == entry_type::custom_message) return true;
  if (type != entry_type::message) return false;
  auto role = role_name(entry);
  return role == "user" || role == "assistant" || role == "bashExecution" || role == "custom" ||
         role == "branchSummary" || role == "compactionSummary";
}

bool starts_turn(const boost::json::object& entry) {
  auto type = type_of(entry);
  if (type == entry_type::branch_summary || type == entry_type::custom_message) return true;
  if (type != entry_type::message) return false;
  auto role = role_name(entry);
  return role == "user" || role == "bashExecution";
}

std::optional<std::size_t> turn_start_at_or_before(session_path path, std::size_t index, std::size_t start) {
  for (std::size_t i = index + 1; i-- > start;)
    if (starts_turn(*path[i])) return i;
  return std::nullopt;
}

std::int64_t message_entry_tokens(const boost::json::object& entry) {
  const auto* m = message_of(entry);
  return m ? estimate_tokens(*m) : 0;
}

// Walk back from the newest entry summing message estimates; at the first entry where the sum
// reaches keep_recent, cut at the first valid cut point at or after it.
std::size_t budget_cut_index(session_path path, const std::vector<std::size_t>& cut_points, std::size_t start,
                             std::size_t end, std::int64_t keep_recent) {
  std::int64_t kept = 0;
  for (std::size_t i = end; i-- > start;) {
    if (!is_message_entry(*path[i])) continue;
    kept += message_entry_tokens(*path[i]);
    if (kept < keep_recent) continue;
    auto it = std::lower_bound(cut_points.begin(), cut_points.end(), i);
    return it == cut_points.end() ? cut_points.front() : *it;
  }
  return cut_points.front();
}

// Settings entries just before the cut (model_change, label, ...) stay with the kept tail.
std::size_t pull_back_over_non_messages(session_path path, std::size_t cut, std::size_t start) {
  while (cut > start) {
    auto prev = type_of(*path[cut - 1]);
    if (prev == entry_type::compaction || prev == entry_type::message) break;
    --cut;
  }
  return cut;
}

// --- file operations (pi compaction/utils.js) ---

struct file_ops {
  std::set<std::string> read, written, edited;
};

void add_tool_call_file_ops(const boost::json::object& message, file_ops& ops) {
  if (json::get_string(message, "role").value_or("") != "assistant") return;
  const auto* blocks = json::get_array(message, "content");
  if (blocks == nullptr) return;
  for (const auto& v : *blocks) {
    const auto* block = v.if_object();
    if (block == nullptr || json::get_string(*block, "type").value_or("") != "toolCall") continue;
    const auto* args = json::get_object(*block, "arguments");
    auto name = json::get_string(*block, "name");
    auto path = args ? json::get_string(*args, "path") : std::nullopt;
    if (!name || !path || path->empty()) continue;
    if (*name == "read") ops.read.emplace(*path);
    if (*name == "write") ops.written.emplace(*path);
    if (*name == "edit") ops.edited.emplace(*path);
  }
}

void add_strings(const boost::json::object& details, std::string_view key, std::set<std::string>& to) {
  if (const auto* list = json::get_array(details, key))
    for (const auto& v : *list)
      if (const auto* s = v.if_string()) to.emplace(*s);
}

// A pi-generated previous compaction carries the file lists of everything before it.
void add_previous_compaction_file_ops(const boost::json::object& compaction, file_ops& ops) {
  if (json::get_bool(compaction, "fromHook").value_or(false)) return;
  const auto* details = json::get_object(compaction, "details");
  if (details == nullptr) return;
  add_strings(*details, "readFiles", ops.read);
  add_strings(*details, "modifiedFiles", ops.edited);
}

// Array.prototype.sort() order: UTF-16 code units, not code points.
std::u16string utf16_units(std::string_view utf8) {
  std::u16string out;
  for (std::size_t i = 0; i < utf8.size();) {
    auto c = static_cast<unsigned char>(utf8[i]);
    std::size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len && i + k < utf8.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    if (cp >= 0x10000) {
      out.push_back(static_cast<char16_t>(0xD800 + ((cp - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + ((cp - 0x10000) & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
    i += len;
  }
  return out;
}

void js_sort(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) { return utf16_units(a) < utf16_units(b); });
}

// computeFileLists: modified = edited + written; read-only = read - modified.
void set_file_lists(const file_ops& ops, compaction_plan& plan) {
  std::set<std::string> modified(ops.edited);
  modified.insert(ops.written.begin(), ops.written.end());
  for (const auto& f : ops.read)
    if (!modified.count(f)) plan.read_files.push_back(f);
  plan.modified_files.assign(modified.begin(), modified.end());
  js_sort(plan.read_files);
  js_sort(plan.modified_files);
}

std::optional<std::size_t> last_compaction_index(session_path path) {
  for (std::size_t i = path.size(); i-- > 0;)
    if (type_of(*path[i]) == entry_type::compaction) return i;
  return std::nullopt;
}

std::size_t boundary_after(session_path path, std::size_t compaction_index) {
  auto kept = json::get_string(*path[compaction_index], "firstKeptEntryId");
  for (std::size_t i = 0; kept && i < path.size(); ++i)
    if (id_of(*path[i]) == kept) return i;
  return compaction_index + 1;
}

std::vector<boost::json::object> messages_between(session_path path, std::size_t from, std::size_t to) {
  std::vector<boost::json::object> out;
  for (std::size_t i = from; i < to; ++i)
    if (auto m = message_for_compaction(*path[i])) out.push_back(std::move(*m));
  return out;
}

}  // namespace

std::int64_t effective_reserve(const compaction_settings& settings, std::int64_t context_window) {
  std::int64_t floor = std::max<std::int64_t>(0, settings.reserve_tokens_floor);
  std::optional<std::int64_t> max_reserve;
  if (context_window > 0) {
    std::int64_t min_prompt = std::min(kMinPromptBudgetTokens, std::max<std::int64_t>(1, context_window / 2));
    max_reserve = std::max<std::int64_t>(0, context_window - min_prompt);
    floor = std::min(floor, *max_reserve);
  }
  std::int64_t reserve = std::max(settings.reserve_tokens, floor);
  return max_reserve ? std::min(reserve, *max_reserve) : reserve;
}

bool should_compact_after_turn(std::int64_t context_tokens, std::int64_t context_window, std::int64_t reserve_tokens) {
  return context_window > 0 && context_tokens > context_window - reserve_tokens;
}

const char* preflight_reason(preflight_trigger trigger) noexcept {
  return trigger == preflight_trigger::transcript_bytes ? "transcript_bytes" : "preflight";
}

std::optional<preflight_trigger> should_compact_before_turn(const compaction_settings& settings,
                                                            const preflight_state& state) {
  std::int64_t window = state.context_window > 0 ? state.context_window : kDefaultContextWindow;
  std::int64_t floor = std::max<std::int64_t>(0, settings.reserve_tokens_floor);
  std::int64_t threshold = std::max<std::int64_t>(
      {0, window - floor - state.soft_threshold_tokens, state.responses_compact_threshold.value_or(0)});
  std::int64_t tail = state.last_output_tokens + state.prompt_estimate_tokens;
  std::int64_t projected = std::max<std::int64_t>(
      {state.transcript_prompt_tokens ? *state.transcript_prompt_tokens + tail : 0,
       state.fresh_persisted_total_tokens ? *state.fresh_persisted_total_tokens + tail : 0,
       state.stale_persisted_total_tokens.value_or(0)});
  bool by_tokens = threshold > 0 && projected > 0 && projected >= threshold;
  std::uint64_t byte_limit = settings.max_active_transcript_bytes.value_or(0);
  bool by_bytes = settings.truncate_after_compaction && byte_limit > 0 && state.transcript_bytes &&
                  *state.transcript_bytes >= byte_limit;
  if (by_bytes) return preflight_trigger::transcript_bytes;
  if (by_tokens) return preflight_trigger::tokens;
  return std::nullopt;
}

cut_point find_cut_point(session_path path, std::size_t start, std::size_t end, std::int64_t keep_recent_tokens) {
  end = std::min(end, path.size());
  std::vector<std::size_t> cut_points;
  for (std::size_t i = start; i < end; ++i)
    if (is_valid_cut_point(*path[i])) cut_points.push_back(i);
  if (cut_points.empty()) return cut_point{start, std::nullopt, false};

  std::size_t cut = budget_cut_index(path, cut_points, start, end, keep_recent_tokens);
  cut = pull_back_over_non_messages(path, cut, start);

  const auto& cut_entry = *path[cut];
  bool cut_at_user = is_message_entry(cut_entry) && role_name(cut_entry) == "user";
  auto turn_start = cut_at_user ? std::nullopt : turn_start_at_or_before(path, cut, start);
  return cut_point{cut, turn_start, !cut_at_user && turn_start.has_value()};
}

std::vector<boost::json::object> session_context_messages(session_path path) {
  auto chain = leaf_to_root_order(path);
  const boost::json::object* compaction = nullptr;
  for (const auto* e : chain)
    if (type_of(*e) == entry_type::compaction) compaction = e;

  std::vector<boost::json::object> out;
  if (compaction == nullptr) {
    for (const auto* e : chain) append_context_message(out, *e);
    return out;
  }
  out.push_back(compaction_summary_context_message(*compaction));
  auto compaction_id = id_of(*compaction);
  std::size_t at = 0;
  while (at < chain.size() && !(type_of(*chain[at]) == entry_type::compaction && id_of(*chain[at]) == compaction_id))
    ++at;
  auto first_kept = json::get_string(*compaction, "firstKeptEntryId");
  bool keeping = false;
  for (std::size_t i = 0; i < at; ++i) {
    keeping = keeping || (first_kept && id_of(*chain[i]) == first_kept);
    if (keeping) append_context_message(out, *chain[i]);
  }
  for (std::size_t i = at + 1; i < chain.size(); ++i) append_context_message(out, *chain[i]);
  return out;
}

std::optional<compaction_plan> plan_compaction(session_path path, const compaction_settings& settings) {
  if (!path.empty() && type_of(*path.back()) == entry_type::compaction) return std::nullopt;

  compaction_plan plan;
  auto previous = last_compaction_index(path);
  if (previous) {
    if (auto summary = json::get_string(*path[*previous], "summary")) plan.previous_summary = std::string(*summary);
    plan.boundary_start = boundary_after(path, *previous);
  }
  plan.tokens_before = estimate_context_tokens(session_context_messages(path)).tokens;

  auto cut = find_cut_point(path, plan.boundary_start, path.size(), settings.keep_recent_tokens);
  if (cut.first_kept_entry_index >= path.size()) return std::nullopt;
  auto kept_id = id_of(*path[cut.first_kept_entry_index]);
  if (!kept_id || kept_id->empty()) return std::nullopt;  // an unmigrated (v1) transcript

  plan.first_kept_entry_id = std::string(*kept_id);
  plan.first_kept_entry_index = cut.first_kept_entry_index;
  plan.is_split_turn = cut.is_split_turn;
  plan.turn_start_index = cut.turn_start_index;
  std::size_t history_end = cut.is_split_turn ? *cut.turn_start_index : cut.first_kept_entry_index;
  plan.messages_to_summarize = messages_between(path, plan.boundary_start, history_end);
  if (cut.is_split_turn)
    plan.turn_prefix_messages = messages_between(path, *cut.turn_start_index, cut.first_kept_entry_index);

  file_ops ops;
  if (previous) add_previous_compaction_file_ops(*path[*previous], ops);
  for (const auto& m : plan.messages_to_summarize) add_tool_call_file_ops(m, ops);
  for (const auto& m : plan.turn_prefix_messages) add_tool_call_file_ops(m, ops);
  set_file_lists(ops, plan);
  return plan;
}

boost::json::object plan_details_json(const compaction_plan& plan) {
  boost::json::object details;
  details["readFiles"] = boost::json::array(plan.read_files.begin(), plan.read_files.end());
  details["modifiedFiles"] = boost::json::array(plan.modified_files.begin(), plan.modified_files.end());
  return details;
}

}  // namespace sessionrt::actors
