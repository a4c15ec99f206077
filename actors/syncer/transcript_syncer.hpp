// transcript_syncer: group commit for storage.durability=batch (SPEC §1.2). Session actors
// write their lines, then ask it to make them durable: (sync, file, seq, dir) — `file` the
// transcript's shared fd (storage/shared_fd.hpp: the request keeps the file open, so its
// owner may close its side at any time), dir a directory whose new entries must become
// durable too ("" for none). Requests that arrive while a round is running wait for the next
// round, and one round makes every file in it durable — per filesystem, fdatasync per file for
// a few files, one syncfs (one journal commit for all) from 4 files on — and fsyncs each
// directory once,
// then answers every request with (synced, file id, seq, error) — error "" when durable.
// Under load many appends and many sessions share one round. Spawn it detached: fdatasync
// blocks.
#pragma once
#include "actors/caf_types.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

// window_ms: how long a round stays open after its first request (storage.batchWindowMs), so
// that concurrent sessions share it; 0 starts the round as soon as the mailbox is read.
caf::behavior transcript_syncer(caf::event_based_actor* self, storage::fs* files, std::int64_t window_ms);

}  // namespace sessionrt::actors
