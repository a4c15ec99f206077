// commit_log_setup: the runtime's steps on a state dir's commit log around loading its stores
// (storage/commit_log/log_recovery.hpp). open_commit_log(), before any store or transcript is
// loaded: replay into the transcripts what a previous run left (whatever its durability mode
// was), keeping the logs. apply_logged_rows(), for each store just loaded (before it is
// reconciled with its transcripts): the row changes its sessions.json lacks. finish_commit_log(),
// once every loaded store that got rows was written: the row changes of stores no agent loads
// applied to their files, the old logs removed, and with durability batch the log this run
// writes started. A crash before the removal replays the same logs again, to the same files.
// The caller holds a lock that keeps other runtimes off the state dir (the first agent's store
// lock: one runtime per state dir). The replay's warnings (torn log tails, holes, rows a store
// refused) go to the log; its counts are returned.
#pragma once
#include <optional>
#include <set>
#include <string>

#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_recovery.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::runtime {

struct commit_log_setup {
  storage::commit_log::recovery recovered;
  std::set<std::string> rows_applied;               // stores given their row changes (paths)
  std::optional<storage::commit_log::new_log> log;  // set by finish_commit_log with durability batch
};

result<commit_log_setup> open_commit_log(storage::fs& f, const std::string& state_dir);
// True when `file` took row changes (the caller writes it before finish_commit_log).
bool apply_logged_rows(commit_log_setup& setup, storage::session_store_file& file);
status finish_commit_log(storage::fs& f, clock& c, const std::string& state_dir, commit_log_setup& setup, bool batch);

}  // namespace sessionrt::runtime
