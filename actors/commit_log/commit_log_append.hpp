// commit_log_append: what a session sends the commit log actor after a turn wrote its lines to
// a transcript (through the page cache): "the bytes [offset, offset + bytes.size()) of this file
// are these; answer (synced, file id, seq, error) once that is durable". A session sends every
// byte not yet acknowledged, so a record that failed is carried again by the next one. Empty
// bytes: nothing new, answered once everything sent before is durable. CAF-free (it travels in
// core_effects).
#pragma once
#include <cstdint>
#include <string>

#include "storage/shared_fd.hpp"

namespace sessionrt::actors {

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
};

}  // namespace sessionrt::actors
