// log_recovery: the commit log's start-up step, before any transcript is repaired or loaded:
// the state dir's identity (made on first use), every log left in <state>/commit-log replayed
// into its transcripts (log_replay.hpp: refused logs stop the start with their error), the
// transcripts made durable, then the logs removed (a crash before that replays them again).
// The caller keeps other runtimes off the state dir meanwhile and starts the next log at
// next_number.
#pragma once
#include <cstdint>
#include <string>

#include "storage/commit_log/log_replay.hpp"

namespace sessionrt::storage::commit_log {

struct recovery {
  std::string state_id;
  replay_report report;
  std::uint64_t next_number = 1;  // above every log number seen
};

result<recovery> recover_logs(fs& f, const std::string& state_dir);

}  // namespace sessionrt::storage::commit_log
