#include "gateway/session_list_merge.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {
std::int64_t updated_at(const bj::value& row) {
  return row.is_object() ? json::get_int(row.as_object(), "updatedAt").value_or(0) : 0;
}
}  // namespace

bj::object merge_session_lists(std::vector<bj::object> answers, std::int64_t offset, std::int64_t limit) {
  if (answers.empty()) return {};
  std::vector<bj::value> rows;
  std::map<std::string, std::size_t> at;  // key -> index in rows
  std::int64_t total = 0, doubles = 0;
  for (auto& a : answers) {
    total += json::get_int(a, "totalCount").value_or(0);
    auto* list = a.if_contains("sessions");
    if (!list || !list->is_array()) continue;
    for (auto& row : list->as_array()) {
      const std::string key(row.is_object() ? json::get_string(row.as_object(), "key").value_or("") : "");
      auto [it, fresh] = at.emplace(key, rows.size());
      if (fresh || key.empty()) {
        rows.push_back(std::move(row));
        continue;
      }
      ++doubles;
      if (updated_at(row) > updated_at(rows[it->second])) rows[it->second] = std::move(row);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const bj::value& a, const bj::value& b) { return updated_at(a) > updated_at(b); });
  total -= doubles;
  const std::int64_t from = std::clamp<std::int64_t>(offset, 0, total);
  const std::int64_t end =
      std::max(from, std::min({from + std::max<std::int64_t>(limit, 0), total, static_cast<std::int64_t>(rows.size())}));
  bj::array page;
  for (std::int64_t i = from; i < end; ++i) page.push_back(std::move(rows[static_cast<std::size_t>(i)]));
  bj::object out = std::move(answers[0]);
  out["count"] = static_cast<std::int64_t>(page.size());
  out["totalCount"] = total;
  out["limitApplied"] = limit;
  out["nextOffset"] = end < total ? bj::value(end) : bj::value(nullptr);
  out["hasMore"] = end < total;
  out["sessions"] = std::move(page);
  return out;
}

}  // namespace sessionrt::gateway
