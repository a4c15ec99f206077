// log_replay: start-up recovery from a state dir's commit logs. Each transcript append record
// says "these bytes are at this offset of the file with this inode"; replaying it, in log order:
//   - the file is missing, or its path now names another inode: skipped (the file was made
//     durable before it was renamed or unlinked; a replay never creates a file);
//   - the bytes are there: skipped;
//   - the file is shorter, or differs from the record (a torn or lost tail): the file is cut at
//     the record's offset and the record's bytes appended;
//   - the file ends before the record's offset (a hole no record fills): skipped, with a
//     warning (cannot happen unless something else cut the file).
// Replaying twice gives the same files (a replay cut short by a crash is simply run again).
// Row records (kRowChange, kStoreWritten) change no file here: each sessions.json's changes not
// yet in it are returned in `rows` (row_replay.hpp), for the caller to apply to the store it
// loads, and to write, before the logs are removed.
// Then every file the logs named is made durable (fdatasync each, or one syncfs per
// filesystem from storage::kSyncfsFrom files on), so that the caller may remove the logs.
// A log stops at its first damaged record (log_reader.hpp); a torn tail there is the crash's
// unacknowledged write and is reported as a warning.
// Refused before anything is replayed (errc::corrupt / errc::unsupported, naming the log, both
// identities or both versions): a log whose header names another state dir, or a newer format.
// Run it before any transcript is repaired or loaded (a repair would cut what replay restores).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/commit_log/row_replay.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage::commit_log {

struct replay_report {
  std::size_t logs = 0;
  std::size_t records = 0;    // transcript appends read
  std::size_t present = 0;    // ... whose bytes were in their file already
  std::size_t rewritten = 0;  // ... written again (the file was cut at the record first)
  std::size_t missing = 0;    // ... whose file is gone or is another file now
  std::size_t holes = 0;      // ... that start past their file's end
  std::uint64_t bytes_rewritten = 0;
  std::size_t files_synced = 0;  // files made durable at the end
  std::vector<std::string> rewritten_paths;  // each once, in first-rewrite order
  std::size_t row_changes = 0;   // row change records read
  std::size_t rows_covered = 0;  // ... that their sessions.json held when it was last written
  // Per sessions.json (absolute path): the changes it lacks, in the order to apply them.
  std::map<std::string, std::vector<row_op>> rows;
  std::vector<std::string> warnings;         // torn log tails, damaged records, holes
};

result<replay_report> replay_logs(fs& f, const std::string& state_dir, const std::string& state_id,
                                  const std::vector<std::string>& log_paths);

}  // namespace sessionrt::storage::commit_log
