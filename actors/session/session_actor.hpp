// session_actor: one per sessionKey (SPEC §2, §3). Its mailbox serializes everything that
// happens to the session; the work is done by session_core. After a turn it
//   - publishes the lifecycle events,
//   - sends the row to the store (and waits for the write when a new sessionId started),
//   - asks the syncer to make the appends durable (storage.durability=batch),
//   - tells the timers when the session goes stale,
// and acknowledges the turn (outcome_sink) once what it waits for is done, in order.
// If another process holds the transcript's write lock, the turn waits (other messages stay
// in the mailbox) and is retried with backoff up to session.writeLock.acquireTimeoutMs, then
// fails with the lock's error. (passivate, why) closes the transcript, releases the lock and
// reports (passivated, key) to the router once no acknowledgement is pending.
#pragma once
#include <memory>

#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"
#include "actors/session/session_core.hpp"

namespace sessionrt::actors {

// The same for every session of an agent: shared, not copied per session.
struct session_actor_deps {
  std::shared_ptr<const session_core_deps> core;
  caf::actor store, syncer, bus, timers;
  std::shared_ptr<event_hub> hub;
};

//   (chat, chat_event, route_facts, outcome_sink)   (system, system_event)
//   (synced, file id, seq, error)                   (passivate, why)
//   (trim)   idle: session_core::trim() (ignored while a turn waits for a lock or it passivates)
//   (stats) -> std::string   one line describing the actor's state (tests)
caf::behavior session_actor(caf::event_based_actor* self, std::string key, entry_reply row,
                            std::shared_ptr<const session_actor_deps> deps);

}  // namespace sessionrt::actors
