// commit_log_actor: the group commit of storage.durability=batch (SPEC §1.2) through one
// append-only log per state dir (storage/commit_log/). A session writes its turn's lines to the
// transcript through the page cache, as every reader expects, then sends the bytes here:
// (log_append, commit_log_append) — answered (synced, file id, seq, error) to the sender once
// an fdatasync of the log that started after the record was written has returned (and, for a
// new transcript, the file and its directory were synced too). The records that arrive while
// syncs run form the next group (classic group commit): the actor writes each round with one
// write as soon as it reads its mailbox, and up to `parallel_syncs` sync workers run the
// fdatasyncs (storage.batchWindowMs > 0 keeps a round open that long first).
// Checkpoint: when the log passes checkpoint_bytes, or every checkpoint_interval_ms (real time
// only), a new log file takes the writes and, once the old one's records are answered, a
// checkpoint worker makes the transcripts written since it began durable (fdatasync each, or
// one syncfs per filesystem) and removes it. (checkpoint) does the same for everything at once
// and closes the log (shutdown; answered "" or the error): later appends fail.
// Errors: a failed write fails the records of that round (the log is cut back to its last
// whole record); a failed fdatasync fails every record of that log not yet answered and a new
// log takes the writes. Answers keep arrival order. The records of a turn that failed are in
// the session's next record again (it sends everything not yet acknowledged).
// With parallel_syncs 0 the actor syncs and checkpoints itself, blocking (the CAF test
// coordinator has no threads for workers).
#pragma once
#include <cstdint>
#include <string>

#include <memory>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/commit_log/commit_log_append.hpp"
#include "actors/commit_log/group_commit.hpp"
#include "storage/commit_log/log_writer.hpp"
#include "messages/clock.hpp"
#include "storage/commit_log/log_files.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

using log_append_atom = caf::atom_constant<caf::atom("logappend")>;
using checkpoint_atom = caf::atom_constant<caf::atom("checkpt")>;
using log_synced_atom = caf::atom_constant<caf::atom("logsynced")>;
using checkpointed_atom = caf::atom_constant<caf::atom("checkpted")>;

}  // namespace sessionrt::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sessionrt::actors::commit_log_append)

namespace sessionrt::actors {

inline constexpr std::uint64_t kCheckpointBytes = 64ull << 20;
inline constexpr std::int64_t kCheckpointIntervalMs = 60000;
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
};

using commit_log_actor = caf::typed_actor<
    caf::reacts_to<log_append_atom, commit_log_append>,   // -> (synced, file id, seq, error) to the sender
    caf::replies_to<checkpoint_atom>::with<std::string>,  // everything durable, the log closed: "" or the error
    caf::reacts_to<flush_atom>,                           // the round's window closed
    caf::reacts_to<tick_atom>,                            // the interval checkpoint's timer
    caf::reacts_to<log_synced_atom, std::uint64_t, std::string>,  // a sync worker's job ended
    caf::reacts_to<checkpointed_atom, std::string>>;              // the checkpoint worker's job ended

struct commit_log_waiter {
  caf::actor to;
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
};

commit_log_actor::behavior_type commit_log(commit_log_actor::stateful_pointer<commit_log_state> self,
                                           commit_log_config cfg);

}  // namespace sessionrt::actors
