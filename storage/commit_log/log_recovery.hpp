// log_recovery: the commit log's start-up step, before any transcript is repaired or loaded:
// the state dir's identity (made on first use), every log left in <state>/commit-log replayed
// into its transcripts (log_replay.hpp: refused logs stop the start with their error) and the
// transcripts made durable (replay_state_dir); then, once every sessions.json has the row
// changes it lacked (the caller applies them to the stores it loads, finish_recovery() to the
// others) and was written durably, the logs removed. A crash anywhere before the removal
// replays them again (idempotently). recover_logs() does both steps for a caller that loads no
// store itself (tools, tests). The caller keeps other runtimes off the state dir meanwhile and
// starts the next log at next_number.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_replay.hpp"

namespace sessionrt::storage::commit_log {

struct recovery {
  std::string state_id;
  replay_report report;
  std::uint64_t next_number = 1;    // above every log number seen (.free files' too)
  std::vector<std::uint64_t> logs;  // the logs replayed (removed by finish_recovery)
};

result<recovery> replay_state_dir(fs& f, const std::string& state_dir);
// Each sessions.json of rec.report.rows not named in `applied` is loaded, given its changes
// and written durably (a warning per refused row in `warnings`); then the logs are removed.
status finish_recovery(fs& f, clock& c, const std::string& state_dir, const recovery& rec,
                       const std::set<std::string>& applied, std::vector<std::string>* warnings = nullptr);
// replay_state_dir() and finish_recovery() with no store loaded by the caller (`c` names a
// sessions.json set aside as corrupt; nullptr: the real clock).
result<recovery> recover_logs(fs& f, const std::string& state_dir, clock* c = nullptr);

}  // namespace sessionrt::storage::commit_log
