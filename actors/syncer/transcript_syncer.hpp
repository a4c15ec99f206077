// transcript_syncer: group commit for storage.durability=batch (SPEC §1.2). Session actors
// write their lines, then ask it to make them durable: (sync, file, seq, dir) — `file` the
// transcript's shared fd (storage/shared_fd.hpp: the request keeps the file open, so its
// owner may close its side at any time), dir a directory whose new entries must become
// durable too ("" for none). The requests gathered so far form a round; one round makes every
// file in it durable — per filesystem, fdatasync per file for a few files, one syncfs (one
// journal commit for all) from 4 files on — and fsyncs each directory once, then answers
// every request with (synced, file id, seq, error) — error "" when durable. Under load many
// appends and many sessions share one round.
//
// Rounds in flight: with `parallel_rounds` N >= 1 the rounds run on N detached sync workers
// (its linked children), so a round can start while an earlier one still waits on the disk:
// a request then waits for about one sync instead of the rest of the running one plus its
// own. Requests that find every worker busy form the round the first worker to finish takes.
// A later round's answer may come first; that is safe, since a sync started after an append
// covers it. With N = 0 the syncer runs each round itself and blocks meanwhile (the CAF test
// coordinator has no threads to run workers on): spawn it detached then.
#pragma once
#include <vector>

#include "actors/caf_types.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

// The runtime's number of rounds in flight.
inline constexpr int kSyncRoundsInFlight = 2;

using transcript_syncer_actor = caf::typed_actor<
    // (sync, file, seq, dir): answered by (synced, file id, seq, error) to the sender
    caf::reacts_to<sync_atom, storage::shared_fd_ptr, std::uint64_t, std::string>,
    caf::reacts_to<flush_atom>,               // the round's window closed
    caf::reacts_to<idle_atom>>;               // the sending sync worker finished its round

struct sync_request {
  storage::shared_fd_ptr file;
  std::uint64_t seq;
  std::string dir;  // a directory to fsync too (a new file in it), or ""
  caf::actor requester;
};

struct syncer_state {
  storage::fs* files = nullptr;
  std::int64_t window_ms = 0;
  std::vector<sync_request> pending;
  bool round_scheduled = false;  // a flush (the window's end) is on its way
  std::vector<caf::strong_actor_ptr> idle;  // workers without a round
  int workers = 0;
};

// window_ms: how long a round stays open after its first request (storage.batchWindowMs), so
// that concurrent sessions share it; 0 starts the round as soon as the mailbox is read.
// files_block: the workers get threads of their own (a sync waits on the device); false, for an
// fs in memory, runs them on the scheduler.
transcript_syncer_actor::behavior_type transcript_syncer(transcript_syncer_actor::stateful_pointer<syncer_state> self,
                                                         storage::fs* files, std::int64_t window_ms,
                                                         int parallel_rounds, bool files_block);

}  // namespace sessionrt::actors
