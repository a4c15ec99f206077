// session_wait: what a session waits on, as its (settle) answers it; settle_report: the sum
// the router answers its (settle) with, over the sessions it asked. Plain values, no CAF.
//
// A session's wait is read after it handled everything sent to it before the settle, so a
// turn is never half-run: it waits on a call (the model gate, the runner, the blocking pool),
// on its transcript's write lock (a backoff in real time), on the store (a row read after a
// trim, or a durable write its ack needs), on the commit log (the sync its ack needs), on its
// debounce alarm (the runtime's clock), or on nothing. Several can hold at once (a turn on the
// model while the previous one's ack waits for its sync); each is reported.
//
// Who needs it: under virtual time (the simulator) the clock may only move once nothing can
// progress without it. Waits on the gate, the runner (a simulated model answers at a virtual
// time) and the debounce alarm only end when the clock moves; waits on the pool, the lock's
// backoff, the store and the log end by themselves (in_transit), and the settle must be asked
// again until they did.
#pragma once
#include <algorithm>
#include <cstdint>

namespace sessionrt::actors {

struct session_wait {
  // The running turn's call: admitted by the gate yet or not, or a summary on the pool.
  bool on_gate = false, on_runner = false, on_pool = false;
  bool lock_retry = false;          // the write lock's backoff (a real-time timer)
  bool row_fetch = false;           // the store's answer to a row read
  std::int64_t wake_at_ms = -1;     // the debounce's alarm, on the runtime's clock (-1: none)
  std::uint32_t acks_on_log = 0;    // finished turns whose ack waits for the commit log's sync
  std::uint32_t acks_on_store = 0;  // ... for a durable store write
  std::uint32_t queued = 0;         // pieces of work waiting behind (chats and system events)

  bool idle() const {
    return !on_gate && !on_runner && !on_pool && !lock_retry && !row_fetch && wake_at_ms < 0 && acks_on_log == 0 &&
           acks_on_store == 0 && queued == 0;
  }
};

struct settle_report {
  std::uint32_t sessions = 0;  // that answered
  std::uint32_t idle = 0;
  std::uint32_t gate = 0, runner = 0, pool = 0, lock_retry = 0, row_fetch = 0, debounce = 0;  // sessions
  std::uint32_t acks_on_log = 0, acks_on_store = 0, queued = 0;                              // summed
  std::int64_t next_wake_ms = -1;  // the earliest debounce alarm (-1: none)
  std::uint32_t unanswered = 0;    // sessions asked that were gone before they answered
  std::uint32_t passivating = 0;   // sessions on their way out, not asked (the router's)

  void add(const session_wait& w) {
    ++sessions;
    idle += w.idle();
    gate += w.on_gate, runner += w.on_runner, pool += w.on_pool;
    lock_retry += w.lock_retry, row_fetch += w.row_fetch;
    if (w.wake_at_ms >= 0) {
      ++debounce;
      next_wake_ms = next_wake_ms < 0 ? w.wake_at_ms : std::min(next_wake_ms, w.wake_at_ms);
    }
    acks_on_log += w.acks_on_log, acks_on_store += w.acks_on_store, queued += w.queued;
  }
  // Waits that end without the clock's moving (see above).
  std::uint32_t in_transit() const { return pool + lock_retry + row_fetch + acks_on_log + acks_on_store; }
};

}  // namespace sessionrt::actors
