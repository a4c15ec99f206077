#include "actors/maintenance/manual_archive.hpp"

#include <string>

#include "messages/json_access.hpp"

namespace sessionrt::actors {

status check_archive_patch(std::string_view key, const session_entry* row, std::optional<std::string_view> expected_session_id,
                           bool archived, bool is_main) {
  const auto id = row ? row->session_id() : std::nullopt;
  if (!id || id->empty()) return status(errc::not_found, "session not found: " + std::string(key));
  if (!expected_session_id)
    return status(errc::invalid_argument, "expectedSessionId required for session lifecycle patch: " + std::string(key));
  if (*expected_session_id != *id)
    return status(errc::already_exists, "Session " + std::string(key) + " changed before patch. Retry.");
  if (archived && is_main) return status(errc::invalid_argument, "Cannot archive an agent's main session.");
  return {};
}

void apply_archive_patch(session_entry& entry, bool archived, std::int64_t now_ms) {
  auto& o = entry.json();
  if (archived) {
    if (!o.contains("archivedAt")) {
      o["archivedAt"] = now_ms;
      o["archiveReason"] = manual_archive_reason;
      json::erase(o, "archivedBy");
    }
    json::erase(o, "pinnedAt");
    return;
  }
  for (std::string_view f : {"archivedAt", "archivedBy", "archiveReason"}) json::erase(o, f);
}

status check_pin_patch(const session_entry& entry, bool pinned) {
  if (pinned && entry.json().contains("archivedAt"))
    return status(errc::invalid_argument, "cannot pin an archived session; restore it first");
  return {};
}

}  // namespace sessionrt::actors
