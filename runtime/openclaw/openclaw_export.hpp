// openclaw_export: `sessionrt export openclaw` — writes, per agent of a sessionrt state dir, an
// OpenClaw 2026.9 agent database <to>/agents/<id>/agent/openclaw-agent.sqlite that OpenClaw
// 2026.9.6 opens and lists (same keys, session ids, token counts), CAF-free.
// The database: OpenClaw's schema version 23 (openclaw_schema.hpp) with its seed rows and a
// schema_meta 'primary' row (role agent, the agent id); per sessions.json row: a session_nodes
// row (entry_json = the row without sessionFile, which has no meaning there; the promoted
// columns OpenClaw indexes: updated_at, status, label, display_name, category, pinned_at,
// archived_at, last_read_at, last_interaction_at, last_activity_at, parent_session_key,
// spawned_by), a session_windows row for its session (reason 'initial', scope and chat
// columns as OpenClaw's migration derives them), a transcript_rewrite_watermarks generation,
// and one transcript_events row per transcript line in file order (seq from 0, the header
// first; event_json = the line's text, created_at = its timestamp) with its
// transcript_event_identities row. The derived projections (active events, full-text rows,
// index state) are left for OpenClaw to rebuild: a session without index state is one its
// reconcile pass indexes.
// The source is only read (sessions.json is parsed, never migrated on disk). A line of a
// transcript that does not parse as a JSON object (a torn last line) is left out and counted.
// Safety: the database is built as "<db>.sessionrt-tmp" and renamed into place when complete
// (fsync'd first): an interrupted export leaves no database; an existing database is never
// replaced (errc::already_exists for that agent: export into an empty dir).
// Errors: a session whose transcript cannot be read is listed with its key and left out (its
// row too); an agent that cannot be exported is listed with the cause.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::openclaw {

struct export_options {
  std::string state_dir;  // sessionrt's state dir
  std::string to_dir;     // the OpenClaw state dir to write
  std::string agent;      // "" = every agent with a sessions.json
  std::function<void(const std::string& agent, std::size_t done, std::size_t total)> progress;
};

struct session_export_error {
  std::string agent;
  std::string key;
  std::string session_id;
  status error;
};

struct agent_export_report {
  std::string agent_id;
  std::string store_path;
  std::string db_path;
  std::size_t sessions = 0;  // rows exported
  std::size_t failed = 0;
  std::uint64_t entries = 0;  // transcript_events rows
  std::uint64_t bytes = 0;    // their event_json bytes
  std::uint64_t skipped_lines = 0;
  status error;
};

struct export_report {
  std::vector<agent_export_report> agents;
  std::vector<session_export_error> errors;
  bool ok() const;
};

result<export_report> export_openclaw(storage::fs& files, clock& time, const export_options& options);

}  // namespace sessionrt::openclaw
