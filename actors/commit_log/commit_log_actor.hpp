// commit_log_actor: the group commit of storage.durability=batch (SPEC §1.2) through one
// append-only log per state dir (storage/commit_log/). A session writes its turn's lines to the
// transcript through the page cache, as every reader expects, then sends the bytes here:
// (log_append, commit_log_append) — answered (synced, file id, seq, error) to the sender once
// an fdatasync of the log that started after the record was written has returned (and, for a
// new transcript, the file and its directory were synced too). The records that arrive while
// syncs run form the next group (classic group commit): the actor writes each round with one
// write as soon as it reads its mailbox, and up to `parallel_syncs` sync workers run the
// fdatasyncs (storage.batchWindowMs > 0 keeps a round open that long first). A worker whose
// job is the only sync running answers the records it covers itself, as soon as its sync
// returns (group_commit.hpp's hand_off), in order, before it reports to the actor; the records
// behind them wait for that report.
// Checkpoint: when the log passes checkpoint_bytes, or every checkpoint_interval_ms (real time
// only), a new log file takes the writes and, once the old one's records are answered, a
// checkpoint worker makes the transcripts written since it began durable (fdatasync each, or
// one syncfs per filesystem) and drops it: renamed <n>.free to be written again as a later log
// (up to `recycled_logs` such files; log_files.hpp), else removed. A log file is allocated
// ahead in chunks of `preallocate_bytes`, so that its fdatasyncs commit no size change (and,
// once recycled, no allocation either). (checkpoint) does the same for everything at once
// and closes the log (shutdown; answered "" or the error): later appends fail.
// Errors: a failed write fails the records of that round (the log is cut back to its last
// whole record); a failed fdatasync fails every record of that log not yet answered and a new
// log takes the writes. Answers keep arrival order. The records of a turn that failed are in
// the session's next record again (it sends everything not yet acknowledged).
// With parallel_syncs 0 the actor syncs and checkpoints itself, blocking (the CAF test
// coordinator has no threads for workers).
// Row changes (commit_log_append.hpp): the rows of an append are written after its bytes, in
// the same round. A session's rows get the next numbers of the row sequence and, once the
// round is written (before its sync), go to their agent's store as one (logrows, row_batch)
// per store and round — sent even when the write failed, as the store has always received
// every row: such a turn fails, and its row reaches sessions.json with the store's next write.
// The stores are named by (spawned, store_routes) before any row arrives. A checkpoint drops a
// log only once a store_written record covers its rows (store_marks.hpp): when a log retires
// holding rows of a store, and at each interval tick while one does, the log asks that store
// with (checkpt): it writes sessions.json with its next window and records that. The shutdown
// checkpoint keeps (and names in a warning) the logs whose rows no write covers: the next
// start replays them.
// (settle) is answered true once every record that arrived before it is answered and no sync
// or checkpoint runs (at once when idle): what the log holds on disk then no longer changes
// until the next append (runtime::settle; the simulator cuts the power only then).
#pragma once
#include <cstdint>
#include <string>

#include <map>
#include <memory>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_append.hpp"
#include "actors/commit_log/group_commit.hpp"
#include "actors/commit_log/store_marks.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

using log_append_atom = caf::atom_constant<caf::atom("logappend")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpt")>;
using log_synced_atom = caf::atom_constant<caf::atom("logsynced")>;
using checkpointed_atom = caf::atom_constant<caf::atom("checkpted")>;
using log_rows_atom = caf::atom_constant<caf::atom("logrows")>;

// What the log needs of a store (store_actor.hpp, whose handle converts to it): the rows of its
// sessions, and the ask to write sessions.json before a checkpoint.
using log_store_port = caf::typed_actor<caf::reacts_to<log_rows_atom, row_batch>, caf::reacts_to<checkpoint_atom>>;
// Whom a (logappend) is answered: (synced, file id, seq, error) to its sender (a session or a store).
using synced_port = caf::typed_actor<caf::reacts_to<synced_atom, std::uint64_t, std::uint64_t, std::string>>;

// Each agent's store: the sessions.json it writes (as records name it) and its actor.
struct store_route {
  std::string path;
  log_store_port store;
};
struct store_routes {
  std::map<std::string, store_route> by_agent;
};

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::commit_log_append)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::row_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::store_routes)

namespace sessionrt::actors {

// The defaults of storage.commitLogCheckpointBytes and storage.commitLogCheckpointIntervalMs.
inline constexpr std::uint64_t kCheckpointBytes = 64ull << 20;
inline constexpr std::int64_t kCheckpointIntervalMs = 60000;
inline constexpr std::uint64_t kLogPreallocateBytes = 4ull << 20;
// Dropped logs kept for reuse (RocksDB's recycle_log_file_num): one is written while the
// previous one waits for its checkpoint, so two cover the steady state.
inline constexpr std::size_t kLogsRecycled = 2;
// Log syncs in flight: one fdatasync of a single file at a time is what the disk serializes
// anyway (bench/disk_floor measures 1 and 2).
inline constexpr int kLogSyncsInFlight = 1;

struct commit_log_config {
  storage::fs* files = nullptr;
  clock* time = nullptr;
  std::string state_dir;
  std::string state_id;
  storage::commit_log::new_log first;  // the log to write to (its fd is the actor's from now on)
  std::int64_t window_ms = 0;          // storage.batchWindowMs
  int parallel_syncs = kLogSyncsInFlight;
  bool files_block = true;       // workers get threads of their own
  bool self_scheduling = true;   // the interval checkpoint (off in virtual time)
  std::uint64_t checkpoint_bytes = kCheckpointBytes;
  std::int64_t checkpoint_interval_ms = kCheckpointIntervalMs;
  std::uint64_t preallocate_bytes = kLogPreallocateBytes;  // 0: the file grows by its writes
  std::size_t recycled_logs = kLogsRecycled;               // 0: dropped logs are removed
};

using commit_log_actor = caf::typed_actor<
    caf::reacts_to<log_append_atom, commit_log_append>,   // -> (synced, file id, seq, error) to the sender
    caf::replies_to<checkpoint_atom>::with<std::string>,  // everything durable, the log closed: "" or the error
    caf::reacts_to<flush_atom>,                           // the round's window closed
    caf::reacts_to<tick_atom>,                            // the interval checkpoint's timer
    caf::reacts_to<log_synced_atom, std::uint64_t, std::string>,  // a sync worker's job ended
    caf::reacts_to<checkpointed_atom, std::string>,               // the checkpoint worker's job ended
    caf::reacts_to<spawned_atom, store_routes>,                   // the agents' stores
    caf::replies_to<settle_atom>::with<bool>>;                    // true once nothing is pending or running

struct commit_log_waiter {
  synced_port to;
  std::uint64_t file_id = 0;
  std::uint64_t seq = 0;
};

struct commit_log_state {
  commit_log_config cfg;
  std::string dir;                 // <state>/commit-log
  std::string prefix;              // "<state dir>/": stripped from the paths in records
  std::unique_ptr<storage::commit_log::log_writer> writer;  // null: no log open (a rotation failed)
  storage::shared_fd_ptr log_fd;   // the current log's descriptor (sync jobs hold it too)
  std::uint64_t log_number = 0;
  std::uint64_t log_header_bytes = 0;
  std::int64_t log_started_ms = 0;
  std::vector<std::pair<std::uint64_t, storage::shared_fd_ptr>> log_fds;  // every log with syncs to come
  group_commit<commit_log_waiter> book;
  std::vector<commit_log_append> pending;  // arrived, not written yet
  std::vector<commit_log_waiter> pending_from;
  bool flush_scheduled = false;
  std::vector<caf::strong_actor_ptr> idle;  // sync workers without a job
  int workers = 0;
  caf::strong_actor_ptr checkpointer;
  bool checkpoint_running = false;
  group_commit<commit_log_waiter>::checkpoint running_checkpoint;  // given back if it fails
  bool closed = false;
  std::string scratch;             // one record's payload
  std::vector<caf::response_promise> settle_waiters;  // (settle) requests not answered yet
  std::map<std::string, store_route> stores;  // by agent; paths relative to the state dir
  std::uint64_t next_row_seq = 1;             // the next session row's number
  store_marks marks;                          // logs whose rows no sessions.json write covers yet
};

commit_log_actor::behavior_type commit_log(commit_log_actor::stateful_pointer<commit_log_state> self,
                                           commit_log_config cfg);

}  // namespace sessionrt::actors
