// session_actor: one per sessionKey (SPEC §2, §3). Its mailbox serializes everything that
// happens to the session; the work is done by session_core, whose turn is a coroutine that
// this actor runs and resumes. The actor never blocks:
//   - a model call goes through the runtime's model_gate (model.maxConcurrent, first come
//     first served) to the asynchronous runner; its answer, its streamed pieces, the gate's
//     admission and the model.timeoutMs alarm come back as messages;
//   - while a turn waits, /status and /context list are answered at once; /stop cancels the
//     call; /new or /reset cancel it and run next; other messages wait by the session's queue
//     mode (turn_queue.hpp: followup, collect, interrupt, steer; cap and drop); system events
//     wait in arrival order;
//   - after a turn it publishes the events, sends the row to the store (and waits for the
//     write when storage.storeDurableAck), asks the syncer to make the appends durable
//     (storage.durability=batch), tells the timers when the session goes stale, and
//     acknowledges the turn (ack_order.hpp: in turn order).
// If another process holds the transcript's write lock, the turn is retried with backoff up
// to session.writeLock.acquireTimeoutMs (what arrives meanwhile waits), then fails with the
// lock's error. (passivate, why) closes the transcript, releases the lock and reports
// (passivated, key) to the router once nothing is running, waiting or unacknowledged; with
// why "stop" it cancels the running turn and refuses what waits first.
#pragma once
#include <memory>

#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"
#include "actors/model/blocking_pool.hpp"
#include "actors/model/model_gate.hpp"
#include "actors/session/session_core.hpp"

namespace sessionrt::actors {

// The same for every session of an agent: shared, not copied per session.
struct session_actor_deps {
  std::shared_ptr<const session_core_deps> core;
  caf::actor store, syncer, bus, timers;
  std::shared_ptr<event_hub> hub;
  async_model_runner* runner = nullptr;  // nullptr: turns fail with "no model runner"
  model_gate* gate = nullptr;            // nullptr: no bound
  blocking_pool* pool = nullptr;         // compaction providers' summarize()
  alarms* timers_clock = nullptr;        // model.timeoutMs, debounce (the runtime's clock)
};

//   (chat, chat_event, route_facts, outcome_sink)   (system, system_event)
//   (synced, file id, seq, error)                   (passivate, why)
//   (granted | mtimeout, call id)   (mdone, call id, model_reply)   (mtext, call id, text)
//   (sdone, call id, summary_reply)  (retry)  (wake)
//   (trim)   idle: session_core::trim() (ignored while anything runs or waits)
//   (stats) -> std::string   one line describing the actor's state (tests)
caf::behavior session_actor(caf::event_based_actor* self, std::string key, entry_reply row,
                            std::shared_ptr<const session_actor_deps> deps);

}  // namespace sessionrt::actors
