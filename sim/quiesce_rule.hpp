// quiesce_rule: whether a simulated runtime waits on virtual time, decided from what its
// sessions said at a settle (runtime::settle -> settle_report, actors/session/session_wait.hpp)
// and the turns the simulation has in flight; and the tally of those decisions (the progress
// line, run_outcome). No CAF, no clock: clock_driver::quiesce asks it after each settle that
// brought no progress.
//   - A session whose finished turn's ack waits for the commit log: the settle let the log
//     answer every record first, so the answer waits in the session's mailbox: settle again.
//   - A session waiting on the blocking pool (a summary), the store (a durable write, a row
//     read) or its write lock's backoff (a real-time timer): that ends by itself, without
//     virtual time: wait for it (the driver waits for progress, then settles again).
//   - Otherwise every session waits on the gate, the model (which answers at virtual times),
//     its debounce alarm (virtual time) or nothing. A turn the simulation has in flight is
//     accounted for when the model waits on its key, or by a session waiting on the gate or its
//     debounce alarm (counted, not matched by key). Turns left over are between actors the
//     settle did not ask (a key whose old actor is passivating, its events waiting in the
//     router): only then the driver's wall-clock fallback waits for them (counted apart).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/session/session_wait.hpp"

namespace sessionrt::sim {

enum class quiesce_verdict { time, settle_again, wait_for_work, unexplained };

// `unexplained_turns`: keys with a turn in flight on which the model does not wait.
inline quiesce_verdict judge_quiesce(const actors::settle_report& w, std::size_t unexplained_turns) {
  if (w.acks_on_log > 0) return quiesce_verdict::settle_again;
  if (w.in_transit() > 0) return quiesce_verdict::wait_for_work;
  if (unexplained_turns <= static_cast<std::size_t>(w.gate) + w.debounce) return quiesce_verdict::time;
  return quiesce_verdict::unexplained;
}

// What the quiesces of a run saw and decided.
struct quiesce_tally {
  // Settles, and the sessions' waits summed over them (a session waiting on two things counts
  // in both).
  std::int64_t settles = 0;
  std::int64_t gate = 0, runner = 0, debounce = 0, pool = 0, lock_retry = 0, row_fetch = 0, acks_on_log = 0,
               acks_on_store = 0, passivating = 0;
  // Verdicts (a settle that brought progress is settled again without one).
  std::int64_t on_time = 0, settled_again = 0, waited_for_work = 0, unexplained = 0;
  // The fallback's rounds of 50 ms that ended without progress, and its give-ups; quiesces
  // that ran out of rounds (10,000 settles) before a verdict of time.
  std::int64_t fallback_stalls = 0, fallback_gave_up = 0, rounds_exhausted = 0;

  void seen(const actors::settle_report& w) {
    ++settles;
    gate += w.gate, runner += w.runner, debounce += w.debounce, pool += w.pool, lock_retry += w.lock_retry;
    row_fetch += w.row_fetch, acks_on_log += w.acks_on_log, acks_on_store += w.acks_on_store;
    passivating += w.passivating;
  }
  void decided(quiesce_verdict v) {
    switch (v) {
      case quiesce_verdict::time: ++on_time; break;
      case quiesce_verdict::settle_again: ++settled_again; break;
      case quiesce_verdict::wait_for_work: ++waited_for_work; break;
      case quiesce_verdict::unexplained: ++unexplained; break;
    }
  }
  // One line for the progress line.
  std::string line() const {
    return std::to_string(settles) + " settles: waits runner " + std::to_string(runner) + ", gate " +
           std::to_string(gate) + ", debounce " + std::to_string(debounce) + ", pool " + std::to_string(pool) +
           ", lock " + std::to_string(lock_retry) + ", row " + std::to_string(row_fetch) + ", log " +
           std::to_string(acks_on_log) + ", store " + std::to_string(acks_on_store) + ", passivating " +
           std::to_string(passivating) + "; verdicts time " + std::to_string(on_time) + ", again " +
           std::to_string(settled_again) + ", work " + std::to_string(waited_for_work) + ", unexplained " +
           std::to_string(unexplained) + " (" + std::to_string(fallback_stalls) + " stalls, " +
           std::to_string(fallback_gave_up) + " give-ups), " + std::to_string(rounds_exhausted) + " out of rounds";
  }
};

}  // namespace sessionrt::sim
