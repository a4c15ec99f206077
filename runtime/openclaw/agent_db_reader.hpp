// agent_db_reader: reads one OpenClaw 2026.8+ agent database (openclaw-agent.sqlite), read-only.
// - open(): refuses a database whose PRAGMA user_version is not openclaw_agent_schema_version
//   (errc::unsupported naming the file and both versions: older ones need OpenClaw's own
//   `openclaw doctor --fix` first, newer ones have a layout this reader does not know), or whose
//   schema_meta names another role than 'agent'. The database is opened as sqlite_db.hpp says
//   (never written; immutable when no -wal is present).
// - list_sessions(): every session_nodes row (key, current session id, entry_json), ordered by
//   key, in one short read transaction.
// - read_transcript(session_id): the transcript as JSONL lines, in seq order, in one short read
//   transaction: when session_transcript_cold_archives names an archive for the session, its
//   event records (the archive is <sessions_dir>/cold/<archive_name>, or the row's blob for
//   storage 'sqlite'; its size and sha256 must match the row, its header the session and
//   generation, its event count and last seq the row), then any transcript_events row after the
//   archive's last seq; else the transcript_events rows. A row's text is event_json, or
//   event_zstd inflated to exactly event_utf8_bytes. Other archives in cold/ are never read.
//   Errors (the message names the session id and the cause; the caller adds the key):
//   errc::corrupt for a torn or mismatching zstd payload / archive, errc::not_found for a
//   missing archive file, errc::locked when the database stays locked past the busy timeout.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "runtime/openclaw/sqlite_db.hpp"

namespace sessionrt::openclaw {

struct session_node {
  std::string key;
  std::string session_id;
  std::string entry_json;
  std::int64_t updated_at = 0;
};

struct transcript_events {
  std::vector<std::string> lines;  // event JSON texts, without '\n'
  std::size_t bytes = 0;           // sum of the lines' sizes
  bool from_cold_archive = false;
};

class agent_db_reader {
 public:
  // `sessions_dir`: where cold/ is (<state>/agents/<id>/sessions).
  static result<std::unique_ptr<agent_db_reader>> open(const std::string& db_path, std::string sessions_dir);

  const std::string& path() const { return db_->path(); }
  result<std::vector<session_node>> list_sessions();
  result<transcript_events> read_transcript(const std::string& session_id);

 private:
  agent_db_reader(std::unique_ptr<sqlite_db> db, std::string sessions_dir)
      : db_(std::move(db)), sessions_dir_(std::move(sessions_dir)) {}
  result<transcript_events> read_transcript_in_tx(const std::string& session_id);

  std::unique_ptr<sqlite_db> db_;
  std::string sessions_dir_;
};

}  // namespace sessionrt::openclaw
