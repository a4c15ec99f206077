// shard_state: opens one shard's state (shard_layout.hpp) for the node that holds it at epoch E,
// through the fence, and makes it what a single node's state dir is after start-up.
//   1. The node's write permit must be valid (nothing is written otherwise).
//   2. The epoch stamp is read: a higher epoch refuses (errc::locked, "fenced", nothing
//      written); a lower one or none is replaced by E, durably, BEFORE anything else is written
//      (read back after the stamp: a racing higher stamp refuses too); E itself is taken as is.
//   3. The single node's start-up steps on the shard's state dir, the same functions the
//      runtime runs on its own (runtime.cpp start-up; runtime/commit_log_setup.hpp): the
//      shard's commit logs replayed into its transcripts, sessions.json loaded (a corrupt one
//      set aside and rebuilt), the logged row changes it lacks applied, the rows reconciled with
//      their transcripts (storage/store_reconcile.hpp: a transcript whose row write was lost is
//      adopted), the file written when any of that changed it, the old logs removed (and, with
//      batch_log, this owner's new log started).
//   4. Each row's transcript tail is checked (the last 4 KiB) and a torn tail (a crash
//      mid-append by the previous owner) repaired (storage/transcript_repair.hpp): the bytes
//      dropped are kept in a .dropped-<ts>.jsonl file beside it, as at a single node's open.
//      A repair that fails is a warning: the session's own open repairs again.
//   Before step 3, the transcript write locks ("<file>.lock", storage/write_lock.hpp) found in
//   the shard's sessions dir are removed: they are an earlier owner's, whose writes the new
//   stamp fences, so they guard nothing. Left there they would keep this owner's sessions
//   waiting on a pid that means nothing here: a fenced owner that still runs (paused,
//   partitioned) cannot unlink them (its sealed files refuse), and on another host any pid is
//   foreign (found by the harness under traffic: a partitioned owner's locks held its sessions
//   on the new owner until its process ended).
// Unlike a single node, no pid lock file is taken on the store: across hosts a pid means
// nothing, and a stopped owner's lock would keep the new owner out. The epoch is the lock; one
// process must not open a shard twice (the caller keeps that).
// The returned store is loaded and durable, for the runtime's store actor. Steps 3 and 4 and the
// returned store and log write through `files`, a guarded_fs over `fs` (every write asks the
// guard first); the shard's sessions must be given the same `files`, which must outlive them.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/epoch_fence.hpp"
#include "cluster/guarded_fs.hpp"
#include "cluster/shard_write_guard.hpp"
#include "cluster/write_permit.hpp"
#include "messages/clock.hpp"
#include "runtime/commit_log_setup.hpp"
#include "storage/session_store_file.hpp"
#include "storage/store_reconcile.hpp"
#include "storage/transcript_repair.hpp"

namespace sessionrt::cluster {

struct shard_open_options {
  bool repair_tails = true;  // step 4
  bool batch_log = false;    // durability batch: start this owner's commit log (commit_log_setup::log)
  storage::store_file_options store;
};

struct shard_open_report {
  open_decision decision = open_decision::write;  // write: E was there already; stamp_then_write: stamped now
  std::optional<std::int64_t> previous_epoch;     // the stamp found (none: a shard never opened)
  storage::store_load_report store;
  std::size_t logged_rows = 0;  // sessions.json rows the commit log gave back (put or removed)
  std::vector<storage::adopted_transcript> adopted;
  std::size_t tails_checked = 0;
  std::vector<storage::repair_report> repaired;  // transcripts whose tail was repaired
  std::vector<std::string> locks_removed;        // an earlier owner's transcript locks
  std::vector<std::string> warnings;
};

struct opened_shard {
  shard_id shard;
  std::string dir;           // the shard's state dir
  std::string sessions_dir;  // <dir>/agents/<agent>/sessions
  // Declared before the store and the log, which hold files opened through them: members are
  // destroyed in reverse order, so the store's and the log's descriptors close first.
  std::shared_ptr<const shard_write_guard> guard;
  std::shared_ptr<guarded_fs> files;  // the shard's files for every writer (guard before each write)
  std::shared_ptr<storage::session_store_file> store;
  runtime::commit_log_setup log;  // the replay's report, state id, next log number (and the log, batch)
  shard_open_report report;
};

// `wall` stamps repairs and store recovery; `permit` and `fs` must outlive the guard.
result<opened_shard> open_shard_state(storage::fs& fs, clock& wall, const std::string& cluster_dir,
                                      const epoch_fence& fence, const write_permit& permit,
                                      const shard_open_options& options = {});

}  // namespace sessionrt::cluster
