// openclaw_import: `sessionrt import openclaw` — copies the sessions of an OpenClaw 2026.8+ state
// dir (per agent: agents/<id>/agent/openclaw-agent.sqlite, cold archives in
// agents/<id>/sessions/cold/) into a sessionrt state dir (agents/<id>/sessions/sessions.json +
// one <sessionId>.jsonl per session), CAF-free.
// What is imported, per session_nodes row: the row (entry_json, with sessionId = the node's
// current session id and sessionFile = the absolute path of the new transcript, as OpenClaw's
// JSON era wrote it) and the transcript of its current session window (agent_db_reader.hpp),
// one JSONL line per transcript event in seq order: each event parsed (must be a JSON object)
// and written back as sessionrt writes JSON (JSON.stringify's bytes), so the context sessionrt
// builds is the context OpenClaw builds from the same events. The first line must be the
// session header naming the session id (a transcript without one gets a version 3 header).
// Earlier windows of a key (before a reset) are not imported: OpenClaw keeps them only as
// history; sessions.json has one row per key.
// Safety and resumability:
// - the source is only read (sqlite_db::open_read_only); the destination store's write lock
//   (write_lock.hpp, non-reentrant, one attempt) is held while an agent is imported: a running
//   sessionrt runtime owning the store makes that agent fail with errc::locked, untouched;
// - each transcript is written whole to a temp file, fsync'd and renamed (replace_file_atomic);
//   rows go into sessions.json after their transcripts, every `rows_batch` sessions and at the
//   end (a durable atomic save). A crash leaves complete transcripts, some without rows; a
//   second run finds them byte-equal, writes nothing for them and adds the rows. Nothing is
//   ever duplicated: a key has one row, a session id one file.
// - a session already imported (row with the same session id, file byte-equal) is skipped; one
//   whose source grew since (the file is a line-boundary prefix of the new bytes) is rewritten;
//   one whose destination differs otherwise (sessionrt appended to it, or the key names another
//   session) is an error for that session and is left as it is.
// Errors: a session that cannot be read (torn zstd payload, missing or mismatching cold archive,
// an event that is not a JSON object) or written is listed in the report with its key, id and
// cause; nothing of it is written; the other sessions are imported. An agent whose database
// cannot be opened (unknown schema version, locked, not a database) is listed with that error.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/process_probe.hpp"

namespace sessionrt::openclaw {

struct import_options {
  std::string from_dir;   // the OpenClaw state dir (OPENCLAW_STATE_DIR)
  std::string state_dir;  // sessionrt's state dir
  std::string agent;      // "" = every agent with a database
  bool durable = true;    // fsync transcripts and sessions.json
  std::size_t rows_batch = 500;
  // Called after each session of an agent (done of total).
  std::function<void(const std::string& agent, std::size_t done, std::size_t total)> progress;
};

struct session_import_error {
  std::string agent;
  std::string key;
  std::string session_id;
  status error;
};

struct agent_import_report {
  std::string agent_id;
  std::string db_path;
  std::string store_path;
  std::size_t sessions = 0;  // session_nodes rows
  std::size_t imported = 0;  // written by this run
  std::size_t updated = 0;   // rewritten because the source had grown
  std::size_t skipped = 0;   // complete from an earlier run
  std::size_t failed = 0;
  std::uint64_t entries = 0;  // transcript lines (header included) of the sessions in sessions.json now
  std::uint64_t bytes = 0;    // their transcript bytes
  std::uint64_t bytes_read = 0;  // event JSON read from the database / archives
  std::int64_t elapsed_ms = 0;
  status error;  // the agent could not be imported at all
};

struct import_report {
  std::vector<agent_import_report> agents;
  std::vector<session_import_error> errors;
  bool ok() const;
};

// Errors (returned, nothing done): from_dir has no agents/<id>/agent/openclaw-agent.sqlite (or
// not the one --agent names). Everything else is in the report.
result<import_report> import_openclaw(storage::fs& files, clock& time, storage::process_probe& probe,
                                      const import_options& options);

// The JSONL bytes of a transcript from its event texts (exposed for tests and the exporter's
// checks): each line parsed and re-serialized, a header added when the first event is not one.
// `header_ms` is the synthesized header's timestamp.
result<std::string> transcript_bytes(const std::vector<std::string>& events, const std::string& session_id,
                                     std::int64_t header_ms);

}  // namespace sessionrt::openclaw
