// store_reconcile: brings a loaded sessions.json in line with the transcripts beside it at
// start-up. The runtime acknowledges a turn once its transcript is durable; the store row is
// written with the next coalescing window. If the process died in between, the row still
// names the previous session (or is missing) while a newer transcript exists whose header
// names the key (sessionrt writes "sessionKey" into headers). Such a transcript is adopted:
// the row gets its sessionId, sessionFile and start time, as the lost write would have set
// them; the counters start over and the usage lineage grows as a rollover does it
// (start_new_session_counters, next_usage_family). A successor transcript whose header names
// the row's session as its parent (truncateAfterCompaction) continues that session: the lost
// write was the compaction's, so compactionCount goes up by one, sessionStartedAt stays and
// the token figures are marked stale (the next turn reads them from the transcript). Transcripts already
// referenced by a row, archives, and headers without a sessionKey are left alone.
#pragma once
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::storage {

struct adopted_transcript {
  std::string key;
  std::string session_id;
  std::string previous_session_id;  // "" when the key had no row
  std::string path;
};

struct reconcile_report {
  std::vector<adopted_transcript> adopted;
  std::size_t scanned = 0;  // unreferenced transcripts whose header was read
};

// `store` is changed in place; the caller saves it when something was adopted.
result<reconcile_report> reconcile_store(fs& f, session_store& store, const std::string& sessions_dir);

}  // namespace sessionrt::storage
