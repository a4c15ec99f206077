// log_files: where a state dir's commit log lives, whose it is, and how a log file begins.
//   <state>/state-id             the state dir's identity: a uuid made once (durably) and never
//                                changed; every log file's header names it, so a log moved into
//                                another state dir is refused instead of replayed there.
//   <state>/commit-log/          the logs (0700)
//   <state>/commit-log/<n>.log   log number n (20 digits, from 1); the highest is the one being
//                                written, lower ones wait for their checkpoint or their replay
// Other names in the directory are left alone.
#pragma once
#include <cstdint>
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

// The state dir's identity, read; or made and written durably when there is none yet.
result<std::string> state_identity(fs& f, const std::string& state_dir);
// The numbers of the log files in `dir`, ascending (none when the directory does not exist).
result<std::vector<std::uint64_t>> list_logs(fs& f, const std::string& dir);

struct new_log {
  int fd = -1;  // open O_WRONLY|O_APPEND; the caller closes it
  std::string path;
  std::uint64_t number = 0;
  std::uint64_t length = 0;  // the header record's bytes
};
// Creates log `number` in `dir` (which must exist) holding one header record for `state_id`,
// durable (file and directory fsync'd) before it returns. Fails with already_exists when the
// file exists.
result<new_log> create_log(fs& f, clock& c, const std::string& dir, std::uint64_t number, const std::string& state_id);
// Unlinks the given logs, then fsyncs the directory once.
status remove_logs(fs& f, const std::string& dir, const std::vector<std::uint64_t>& numbers);

}  // namespace sessionrt::storage::commit_log
