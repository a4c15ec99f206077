// session_actor: one per sessionKey (SPEC §2, §3). Its mailbox serializes everything that
// happens to the session; what to do is decided by its session_machine (session_machine.hpp:
// the queue, the acks, the running turn — a session_core coroutine —, lock retry, debounce,
// passivation), whose plans the actor carries out; the actor's own part is the messages and
// the mailbox of the bridge that takes model calls across threads (call_bridge.hpp). The
// actor never blocks:
//   - a model call goes through the runtime's model_gate (model.maxConcurrent, first come
//     first served) to the asynchronous runner; its answer, its streamed pieces, the gate's
//     admission and the model.timeoutMs alarm come back as messages;
//   - while a turn waits, /status and /context list are answered at once; /stop cancels the
//     call; /new or /reset cancel it and run next; other messages wait by the session's queue
//     mode (turn_queue.hpp: followup, collect, interrupt, steer; cap and drop); system events
//     wait in arrival order;
//   - when a model call starts waiting, it sends the commit log the turn's record so far (the
//     user's line, storage.durability=batch) without waiting for its answer;
//   - after a turn it publishes the events, sends the row to the store (and waits for the
//     write when storage.storeDurableAck) — with storage.durability=batch the row instead rides
//     with the turn's commit log append, whose answer covers both, and the log hands it to the
//     store —, tells the timers when the session goes stale, and acknowledges the turn
//     (ack_order.hpp: in turn order).
// If another process holds the transcript's write lock, the turn is retried with backoff up
// to session.writeLock.acquireTimeoutMs (what arrives meanwhile waits), then fails with the
// lock's error. (passivate, why) closes the transcript, releases the lock and reports
// (passivated, key) to the router once nothing is running, waiting or unacknowledged; with
// why "stop" it cancels the running turn and refuses what waits first.
#pragma once
#include <memory>

#include "actors/caf_types.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/model/blocking_work.hpp"
#include "actors/model/model_gate.hpp"
#include "actors/session/session_core.hpp"
#include "actors/session/session_wait.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/commit_log/commit_log_actor.hpp"
#include "actors/timers/timer_actor.hpp"

namespace sessionrt::actors {

// The same for every session of an agent: shared, not copied per session.
struct session_actor_deps {
  std::shared_ptr<const session_core_deps> core;
  store_actor_type store;
  commit_log_actor commit_log;  // durability batch: where the turns' bytes go
  timer_actor_type timers;
  event_bus_actor bus;
  std::shared_ptr<event_hub> hub;
  async_model_runner* runner = nullptr;  // nullptr: turns fail with "no model runner"
  model_gate* gate = nullptr;            // nullptr: no bound
  blocking_work* pool = nullptr;         // compaction providers' summarize() (never on the scheduler)
  alarms* timers_clock = nullptr;        // model.timeoutMs, debounce (the runtime's clock)
};

//   (chat, chat_event, route_facts) -> turn_outcome  answered once the turn is acknowledged
//   (system, system_event) -> turn_outcome  answered once the event was handled (queued for
//                                           the next prompt, or its cron run acknowledged)
//   (synced, file id, seq, error)                   (passivate, why)
//   (granted | mtimeout, call id)   (mdone, call id, model_reply)   (mtext, call id, text)
//   (mnote, call id, kind, JSON)    a runner's tool-loop message or fallback, for the turn
//   (sdone, call id, summary_reply)  (retry)  (wake)
//   (trim)   idle: session_core::trim() (ignored while anything runs or waits)
//   (settle) -> session_wait   once what was sent before is handled: what the session waits on
//                              (session_wait.hpp; cheaper than stats: no text)
//   (stats) -> std::string   one line describing the actor's state (tests)
// Plain values that cross actors, inspectable like those of caf_types.hpp (not registered with
// add_message_type: only ever sent within the process).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_wait& x) {
  return f(caf::meta::type_name("session_wait"), x.on_gate, x.on_runner, x.on_pool, x.lock_retry, x.row_fetch,
           x.wake_at_ms, x.acks_on_log, x.acks_on_store, x.queued);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, settle_report& x) {
  return f(caf::meta::type_name("settle_report"), x.sessions, x.idle, x.gate, x.runner, x.pool, x.lock_retry,
           x.row_fetch, x.debounce, x.acks_on_log, x.acks_on_store, x.queued, x.next_wake_ms, x.unanswered,
           x.passivating);
}

// Whom a session reports (passivated, key) to: the router (router_actor.hpp) that asked.
using passivated_port = caf::typed_actor<caf::reacts_to<passivated_atom, std::string>>;

using session_actor_type = caf::typed_actor<
    caf::replies_to<chat_atom, chat_event_ptr, route_facts>::with<turn_outcome>,
    caf::replies_to<system_atom, system_event>::with<turn_outcome>,
    caf::reacts_to<synced_atom, std::uint64_t, std::uint64_t, std::string>,  // file id, seq, error
    caf::reacts_to<granted_atom, std::uint64_t>,                             // call id
    caf::reacts_to<model_done_atom, std::uint64_t, model_reply>,
    caf::reacts_to<model_text_atom, std::uint64_t, std::string>,
    caf::reacts_to<model_note_atom, std::uint64_t, std::string, std::string>,  // call id, kind, JSON
    caf::reacts_to<summary_done_atom, std::uint64_t, summary_reply>,
    caf::reacts_to<timeout_atom, std::uint64_t>,
    caf::reacts_to<retry_atom>,                // the write lock's backoff ended
    caf::reacts_to<wake_atom>,                 // the debounce ended
    caf::reacts_to<passivate_atom, std::string>,  // why
    caf::replies_to<passivate_atom, std::string, settle_atom>::with<bool>,  // why; only if idle
    caf::reacts_to<trim_atom>,
    caf::replies_to<settle_atom>::with<session_wait>,
    caf::replies_to<stats_atom>::with<std::string>>;

// Spawns the session's actor. Its state (the turn's coroutine, the queue, the call; a
// caf::stateful_actor state private to session_actor.cpp) ends with the actor, closing the
// transcript and releasing its lock.
session_actor_type spawn_session_actor(caf::actor_system& sys, std::string key, entry_reply row,
                                       std::shared_ptr<const session_actor_deps> deps);

}  // namespace sessionrt::actors
