// runtime_stats: the runtime's counters as one value (runtime::stats()): the router's session
// slots, its pending timers and the model-call gate. Hosts read fields (the gateway's /metrics,
// tests, benches); to_text() renders the one-line form diagnostics print ("live=1 trimmed=0
// ..."), which status.runtime still carries on the wire. No CAF.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace sessionrt::runtime {

struct runtime_stats {
  bool stopped = false;  // the runtime was stopped: every count below is zero
  // The router's slot table (actors/router/session_slots.hpp) and what it memoizes.
  std::size_t live = 0;         // sessions with a live actor (trimmed ones included)
  std::size_t trimmed = 0;      // live sessions asked to drop their caches since their last event
  std::size_t slots = 0;        // keys with a slot (queued, activating, live, passivating, held)
  std::size_t open = 0;         // activating, live or passivating (each may hold a transcript open)
  std::size_t passivating = 0;  // live actors asked to passivate, not yet gone
  std::size_t queued = 0;       // keys waiting for room under session.maxLiveSessions
  std::size_t waiting = 0;      // events waiting in slots that are not live
  std::uint64_t turns = 0;      // events the router delegated to a session actor
  std::size_t routes = 0;       // memoized routes
  std::string router_error;     // set when the router did not answer (its counts are zero then)
  std::size_t timers = 0;       // pending timers
  std::string timers_error;     // set when the timer actor did not answer
  // The model-call gate (actors/model/model_gate.hpp).
  std::size_t model_running = 0, model_waiting = 0, model_peak = 0;
};

// "live=.. trimmed=.. slots=.. open=.. passivating=.. queued=.. waiting=.. turns=.. routes=..
// timers=.. model_running=.. model_waiting=.. model_peak=..", "router=? (why)" / "timers=? (why)"
// in place of a part that did not answer, or "stopped".
std::string to_text(const runtime_stats& s);

}  // namespace sessionrt::runtime
