// log_files: where a state dir's commit log lives, whose it is, and how a log file begins.
//   <state>/state-id             the state dir's identity: a uuid made once (durably) and never
//                                changed; every log file's header names it, so a log moved into
//                                another state dir is refused instead of replayed there.
//   <state>/commit-log/          the logs (0700)
//   <state>/commit-log/<n>.log   log number n (20 digits, from 1); the highest is the one being
//                                written, lower ones wait for their checkpoint or their replay
//   <state>/commit-log/<n>.free  a log a checkpoint dropped, kept to be written again as a later
//                                log (recycled: its blocks are allocated, so the next log's
//                                fdatasyncs commit no size change); never replayed
// Other names in the directory are left alone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/commit_log/log_record.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage::commit_log {

std::string log_dir(const std::string& state_dir);
std::string state_id_path(const std::string& state_dir);
std::string log_path(const std::string& dir, std::uint64_t number);
std::string free_log_path(const std::string& dir, std::uint64_t number);
// The number in a log file's name (<n>.log), if it is one.
std::optional<std::uint64_t> log_number_of(const std::string& path);

// The state dir's identity, read; or made and written durably when there is none yet.
result<std::string> state_identity(fs& f, const std::string& state_dir);
// The numbers of the log files in `dir`, ascending (none when the directory does not exist).
result<std::vector<std::uint64_t>> list_logs(fs& f, const std::string& dir);
// The numbers of the <n>.free files in `dir`, ascending. A log number is never used twice in a
// state dir: the next one is above these too (a recycled file's old bytes carry its earlier
// uses' numbers, all at most its name's).
std::vector<std::uint64_t> free_logs(fs& f, const std::string& dir);

struct new_log {
  int fd = -1;  // open O_WRONLY (log_writer pwrites at the log's length); the caller closes it
  std::string path;
  std::uint64_t number = 0;
  std::uint64_t length = 0;     // the header record's bytes
  std::uint64_t allocated = 0;  // the file's size: a recycled file's old one, else `length`
  bool recycled = false;
};
// Starts log `number` in `dir` (which must exist) holding one header record for `state_id`,
// durable (file and directory fsync'd) before it returns: in a <n>.free file when there is one
// (its header written and synced over the old bytes first, then the file renamed: a crash in
// between leaves a .free file or a log whose header is its own, never an old log under a new
// name), else in a new file. Fails with already_exists when the log exists.
result<new_log> create_log(fs& f, clock& c, const std::string& dir, std::uint64_t number, const std::string& state_id);
// Unlinks the given logs, then fsyncs the directory once.
status remove_logs(fs& f, const std::string& dir, const std::vector<std::uint64_t>& numbers);
// A checkpoint's drop: the given logs renamed <n>.free while fewer than `keep` .free files are
// there, the others unlinked; then the directory fsync'd once.
status recycle_logs(fs& f, const std::string& dir, const std::vector<std::uint64_t>& numbers, std::size_t keep);

}  // namespace sessionrt::storage::commit_log
