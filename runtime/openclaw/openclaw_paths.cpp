// The path helpers declared in openclaw_schema.hpp.
#include <string>

#include "runtime/openclaw/openclaw_schema.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::openclaw {

std::string agent_db_path(std::string_view state_dir, std::string_view agent_id) {
  return storage::path_join(storage::path_join(storage::path_join(storage::path_join(state_dir, "agents"), agent_id), "agent"),
                            openclaw_agent_db_name);
}

std::string agent_sessions_dir(std::string_view state_dir, std::string_view agent_id) {
  return storage::path_join(storage::path_join(storage::path_join(state_dir, "agents"), agent_id), "sessions");
}

std::string cold_archive_path(std::string_view sessions_dir, std::string_view archive_name) {
  return storage::path_join(storage::path_join(sessions_dir, "cold"), archive_name);
}

bool is_cold_archive_name(std::string_view name) {
  constexpr std::string_view suffix = ".jsonl.zst";
  if (name.size() != 64 + suffix.size() || name.substr(64) != suffix) return false;
  for (char c : name.substr(0, 64))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace sessionrt::openclaw
