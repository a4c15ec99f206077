// commit_log_setup: the runtime's first step on a state dir's commit log, before any store or
// transcript is loaded (storage/commit_log/log_recovery.hpp): replay and remove what a previous
// run left (whatever its durability mode was), and with durability batch start the log this
// run writes. The caller holds a lock that keeps other runtimes off the state dir (the first
// agent's store lock: one runtime per state dir). The replay's warnings (torn log tails,
// holes) go to the log; its counts are returned.
#pragma once
#include <optional>
#include <string>

#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_recovery.hpp"

namespace sessionrt::runtime {

struct commit_log_setup {
  storage::commit_log::recovery recovered;
  std::optional<storage::commit_log::new_log> log;  // set with durability batch
};

result<commit_log_setup> open_commit_log(storage::fs& f, clock& c, const std::string& state_dir, bool batch);

}  // namespace sessionrt::runtime
