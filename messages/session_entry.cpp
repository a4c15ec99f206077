#include "messages/session_entry.hpp"

#include <algorithm>

namespace sessionrt {

std::vector<std::string> session_entry::usage_family_session_ids() const {
  std::vector<std::string> ids;
  if (const auto* a = json::get_array(obj_, "usageFamilySessionIds"))
    for (const auto& v : *a)
      if (v.is_string()) ids.emplace_back(v.get_string());
  return ids;
}

void session_entry::set_usage_family_session_ids(const std::vector<std::string>& ids) {
  boost::json::array a;
  for (const auto& id : ids) a.emplace_back(id);
  json::set(obj_, "usageFamilySessionIds", std::move(a));
}

void start_new_session_counters(session_entry& row) {
  row.set_compaction_count(0);
  row.set_total_tokens(0);
  row.set_total_tokens_fresh(true);
  for (const char* key : new_session_deleted_fields) row.erase(key);
}

void count_compaction(session_entry& row, std::optional<std::int64_t> tokens_after) {
  row.set_compaction_count(row.compaction_count().value_or(0) + 1);
  if (tokens_after) {
    row.set_total_tokens(*tokens_after);
    row.set_total_tokens_fresh(true);
  } else {
    row.set_total_tokens_fresh(false);
  }
  for (const char* k : {"inputTokens", "outputTokens", "cacheRead", "cacheWrite"}) row.erase(k);
}

void extend_usage_family(session_entry& row, std::string_view session_key, std::string_view new_session_id) {
  usage_family family = next_usage_family(row, session_key, new_session_id);
  row.set_usage_family_key(family.key);
  row.set_usage_family_session_ids(family.session_ids);
}

usage_family next_usage_family(const session_entry& previous, std::string_view session_key,
                               std::string_view new_session_id) {
  usage_family f;
  f.key = std::string(previous.usage_family_key().value_or(session_key));
  std::vector<std::string> ids = previous.usage_family_session_ids();
  if (auto id = previous.session_id(); id && !id->empty()) ids.emplace_back(*id);
  ids.emplace_back(new_session_id);
  for (auto& id : ids)
    if (std::find(f.session_ids.begin(), f.session_ids.end(), id) == f.session_ids.end())
      f.session_ids.push_back(std::move(id));
  return f;
}

}  // namespace sessionrt
