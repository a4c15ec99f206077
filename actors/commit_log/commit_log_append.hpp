// commit_log_append: what a session sends the commit log actor after a turn wrote its lines to
// a transcript (through the page cache): "the bytes [offset, offset + bytes.size()) of this file
// are these; answer (synced, file id, seq, error) once that is durable". A session sends every
// byte not yet acknowledged, so a record that failed is carried again by the next one. Empty
// bytes: nothing new, answered once everything sent before is durable. CAF-free (it travels in
// core_effects).
// Row changes (durability batch) ride along: `rows` of the agent's sessions.json, written in the
// same round as the bytes (after them) and acknowledged with them. A session's rows are then
// handed to the agent's store by the log (a row_batch, each row with its number in the log's
// row sequence), which is how a session's row reaches the store. The store sends its own
// changes (from_store: ordered after the session row `store_order`) and, after each write of
// sessions.json, a store_written append (no rows) — log_format.hpp kRowChange, kStoreWritten.
// With no transcript (file null, bytes empty) an append carries rows only; `seq` is then the
// sender's own count, answered as (synced, 0, seq, error).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "storage/shared_fd.hpp"

namespace sessionrt::actors {

// One row of sessions.json as the log records it.
struct logged_row {
  std::string key;
  std::string text;       // as session_store::append_row_text writes it; empty: removed
  std::uint64_t seq = 0;  // set by the log for a session's row: its place in the row sequence
};

// The log to the store: the session rows just written, in their sequence.
struct row_batch {
  std::vector<logged_row> rows;
};

struct commit_log_append {
  storage::shared_fd_ptr file;  // kept open by the log until a checkpoint made the file durable
  std::string path;             // the transcript's path (absolute, or relative to the cwd)
  std::uint64_t inode = 0;      // the file's inode: replay leaves any other file at that path alone
  std::uint64_t offset = 0;
  std::string bytes;
  std::uint64_t seq = 0;        // the transcript's written_seq() after these bytes
  // The file was created by this writer and never synced: its data and its directory entry are
  // made durable with the record (a replay never creates a file).
  bool new_file = false;
  // The file was opened (not created) by this writer and this is its first record: the file is
  // synced with it, since what it held before may be an earlier process's unlogged tail (a
  // user line written before a crash) that no replay knows of, and a hole before this record
  // would keep the record from being replayed.
  bool sync_file = false;
  // Row changes of `agent`'s sessions.json (see above).
  std::string agent;
  std::vector<logged_row> rows;
  bool from_store = false;          // the store's own changes (rows), or its written record
  bool store_written = false;       // the store wrote sessions.json (no rows)
  std::uint64_t store_order = 0;    // from the store: the last session row it had taken
};

}  // namespace sessionrt::actors
