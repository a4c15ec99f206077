// store_actor: the one writer of a sessions.json (SPEC §1.1). Every mutation of the store goes
// through its mailbox; writes are coalesced: a put marks the store dirty and the file is
// written once per window (storage.storeFlushWindowMs, default 50 ms, stretched to 4x the last
// write's duration so a large store is not rewritten back to back). A put that asks for a
// durable ack is answered after the write that includes it, which then happens at once (all
// durable puts already queued share it). A failed write keeps the rows dirty, is retried at
// the next window and fails the durable acks waiting on it. Spawn it detached: a write
// fsyncs, and that must not block a scheduler thread. After each write the rows keep only their
// place in the file just written (session_store_file::shed_rows) until next read or changed.
//   (get, key) -> entry_reply            (put, key, entry)             fire and forget
//   (put, key, entry, flush) -> bool     (list) -> entry_rows
//   (put, key, row_text[, flush])        the row as session_store::append_row_text wrote it
//   (flush, stop) -> bool                write now (shutdown, runtime::flush)
#pragma once
#include <memory>

#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::actors {

struct store_actor_config {
  std::int64_t flush_window_ms = 50;
  std::string agent_id;
  caf::actor bus;
  std::shared_ptr<event_hub> hub;
  clock* time = nullptr;
};

caf::behavior store_actor(caf::event_based_actor* self, std::shared_ptr<storage::session_store_file> file,
                          store_actor_config cfg);

}  // namespace sessionrt::actors
