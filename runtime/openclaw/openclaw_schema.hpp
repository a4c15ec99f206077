// openclaw_schema: what an OpenClaw 2026.9.6 agent database (agents/<id>/agent/openclaw-agent.sqlite)
// is made of, as far as sessionrt reads and writes it.
// - openclaw_agent_schema_version: PRAGMA user_version (and schema_meta.schema_version of the
//   'primary' row, role 'agent') of the databases this module reads and writes. A database at
//   another version is refused by the importer (older: OpenClaw's `doctor --fix` migrates it;
//   newer: unknown layout).
// - openclaw_agent_schema_sql(): every CREATE statement of such a database (openclaw_schema.cpp,
//   dumped from a database OpenClaw 2026.9.6 made); executing it on an empty database gives the
//   schema OpenClaw checks for. openclaw_agent_seed_sql(): the rows its schema script inserts.
// - paths: agent_db_path(state, agent) = <state>/agents/<agent>/agent/openclaw-agent.sqlite; a cold
//   archive named in session_transcript_cold_archives (storage 'file') is
//   <state>/agents/<agent>/sessions/cold/<archive_name>, archive_name = <sha256 hex>.jsonl.zst.
#pragma once
#include <string>
#include <string_view>

namespace sessionrt::openclaw {

inline constexpr int openclaw_agent_schema_version = 23;
inline constexpr std::string_view openclaw_agent_db_name = "openclaw-agent.sqlite";
// The version OpenClaw's schema dump came from (written as schema_meta.app_version on export:
// OpenClaw rewrites it with its own version the first time it writes the database).
inline constexpr std::string_view openclaw_schema_app_version = "2026.9.6";

const char* openclaw_agent_schema_sql();
inline const char* openclaw_agent_seed_sql() {
  return "INSERT OR IGNORE INTO session_key_contract (id, main_key, updated_at) VALUES (1, 'main', 0);\n"
         "INSERT OR IGNORE INTO memory_index_state (id, revision) VALUES (1, 0);\n";
}

std::string agent_db_path(std::string_view state_dir, std::string_view agent_id);
std::string agent_sessions_dir(std::string_view state_dir, std::string_view agent_id);
std::string cold_archive_path(std::string_view sessions_dir, std::string_view archive_name);
// True for "<64 lowercase hex>.jsonl.zst" (OpenClaw refuses any other archive name).
bool is_cold_archive_name(std::string_view name);

}  // namespace sessionrt::openclaw
