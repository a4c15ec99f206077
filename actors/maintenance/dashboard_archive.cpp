#include "actors/maintenance/dashboard_archive.hpp"

#include <fmt/format.h>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/router/session_key.hpp"
#include "messages/js_text.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

// OpenClaw's isSubagentSessionKey: "subagent:..." bare or as an agent key's rest.
bool is_subagent_key(std::string_view key) {
  if (js_lowercase(js_trim(key)).rfind("subagent:", 0) == 0) return true;
  auto parsed = parse_agent_session_key(key);
  return parsed && parsed->rest.rfind("subagent:", 0) == 0;
}

}  // namespace

bool is_dashboard_key(std::string_view key) {
  auto parsed = parse_agent_session_key(key);
  return parsed && parsed->rest.rfind("dashboard:", 0) == 0;
}

bool is_stale_dashboard(const maintenance_row& row, std::int64_t archive_after_ms, std::int64_t now_ms) {
  if (archive_after_ms <= 0 || row.archived || row.pinned || row.model_locked || row.running) return false;
  if (!is_dashboard_key(row.key())) return false;
  return row.activity_at > 0 && row.activity_at < now_ms - archive_after_ms;
}

bool is_pinnable_row(std::string_view key, const session_entry& entry) {
  if (is_subagent_key(key) || !js_trim(json::get_string(entry.json(), "spawnedBy").value_or("")).empty()) return false;
  const auto parent = js_trim(json::get_string(entry.json(), "parentSessionKey").value_or(""));
  if (parent.empty()) return true;
  auto parsed = parse_agent_session_key(key);
  return parsed && parent == build_main_key(parsed->agent_id, default_main_key);
}

void archive_row_in_place(session_entry& entry, std::int64_t now_ms, std::string_view reason) {
  auto& o = entry.json();
  o["archivedAt"] = now_ms;
  json::erase(o, "archivedBy");
  o["archiveReason"] = reason;
}

std::uint64_t archived_row_extra_bytes(std::int64_t now_ms, std::string_view reason) {
  // ",\n    \"archivedAt\": <ms>" and ",\n    \"archiveReason\": \"<reason>\"" (a row's fields
  // sit at depth 2 of JSON.stringify(store, null, 2)).
  return fmt::format(",\n    \"archivedAt\": {}", now_ms).size() + fmt::format(",\n    \"archiveReason\": \"{}\"", reason).size();
}

}  // namespace sessionrt::actors
