// maintenance_pass: the bookkeeping of the maintenance actor's passes, CAF-free. A pass walks
// each agent's store: the cron reaper's plan (when due), then the maintenance plan, each applied
// (mode enforce) in batches of at most `batch_actions` actions as maintenance_planner.hpp
// says: the batch's row removals first (one durable store write), then its rows archived in
// place (each key held, its row read back and written if unchanged), then every key whose
// session has a file action in the batch is passivated and read back (a row that came back
// with that session keeps its files), then the file actions. Then, when coldStorage is on, the
// cold storage plan (cold_storage_planner.hpp), applied whatever the mode. Nothing here sends
// or does I/O.
// - batch_of: the rows to erase and to archive, and the keys to check, for actions [begin, end).
// - maintenance_report_event: the `maintenance.report` lifecycle event of a pass: what each
//   job did (enforce) or would do (warn), its counts and its first actions.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

// One plan of one agent's store, being applied.
struct maintenance_job {
  std::string agent_id;
  std::string sessions_dir;
  // A shard's store (a cluster node's, maintenance_actor.hpp): its unit name ("main/017") and
  // the files it is written through (its guard before each write). Empty / nullptr: the agent's.
  std::string shard;
  storage::fs* files = nullptr;
  bool reaper = false;  // the cron reaper's plan
  bool cold = false;    // the cold storage plan (neither: the maintenance plan)
  bool planned = false;
  maintenance_plan plan;
  std::size_t next = 0;  // the first action not yet applied
  // session id -> the keys of the plan's removed rows that referenced it
  std::unordered_map<std::string, std::vector<std::string>> keys_of_session;
  // what happened
  std::size_t rows_removed = 0, files_archived = 0, files_deleted = 0, rows_archived = 0;
  std::size_t files_compressed = 0;
  std::uint64_t cold_bytes_before = 0, cold_bytes_after = 0;  // of the files compressed
  std::vector<plan_action> applied;  // what was done, in order (cleanup's answer)
  std::vector<std::string> skipped;  // one sentence each
  std::string error;                 // the error that stopped the job, if any
};

// Sets job.plan's derived index (keys_of_session); call once the plan is made.
void index_plan(maintenance_job& job);

struct maintenance_batch {
  std::size_t begin = 0, end = 0;
  std::vector<std::string> erase_keys;
  std::vector<std::int64_t> erase_updated_at;  // erase_no_updated_at for a row without one
  std::vector<std::string> check_keys;         // passivate and read back before the files move
  std::vector<std::size_t> archive_rows;       // the archive_row actions (plan indexes)
};
maintenance_batch batch_of(const maintenance_job& job, std::size_t batch_actions, std::int64_t no_updated_at);

// The session ids whose files must stay: a checked key that could not be passivated, or whose
// row now references the session again.
struct batch_checks {
  std::unordered_set<std::string> busy_keys;     // not passivated (starting)
  std::unordered_map<std::string, std::string> row_session;  // key -> session id of its row now
};
std::unordered_set<std::string> sessions_to_keep(const maintenance_job& job, const maintenance_batch& batch,
                                                 const batch_checks& checks);

// One planned or applied action as JSON: {step, <kind_key>, key + label | file (+ target),
// sessionId?, bytes}. The maintenance.report event says "kind"; `sessions cleanup --json`
// keeps the "action" its output has always had.
boost::json::object action_json(const plan_action& a, std::string_view kind_key = "kind");

lifecycle_event maintenance_report_event(const std::vector<maintenance_job>& jobs, maintenance_mode mode,
                                         const std::string& trigger, std::int64_t now_ms,
                                         std::size_t max_actions_listed = 100);

}  // namespace sessionrt::actors
