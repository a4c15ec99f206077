// host_steps: what a host thread asks of several actors in turn, asked of this one actor in
// one request. Each request a host thread makes is two hand-offs between its thread and the
// actors' (and two wake-ups where either sleeps); the simulator settles about three times a
// virtual-time step, advances the clock once and checks for a maintenance pass once, each of
// them two to four actors in turn.
//   (settle)  -> settle_report, failures
//       the relay's (settle): the router and every live session handled what was sent to
//       them before, and say what they wait on (the report); then the commit log's (settle,
//       durability batch only): every record they sent answered and no sync running; then the
//       bus's: their lifecycle events delivered. Each one asked after the one before answered
//       or failed. `failures`: "the router: <error>" for each that did not answer; the others
//       are still asked.
//   (tick)    -> failure
//       the timers' (tick): what is due by the clock fired; the relay's (tick, settle): the
//       router swept and every passivation it started is done; the bus's (settle). Each
//       asked after the one before answered or failed; `failure`: the first that did not
//       answer ("the timers: <error>"), else "".
//   (maintain) -> ran, failure
//       each store's (get, ""), in turn: a put it took before has then told the maintenance
//       actor of high water; the maintenance actor's (tick, settle): the pass that is due, run
//       to its end (ran: whether one was due); when one ran, the bus's (settle). Every one is
//       asked whatever the one before answered; `failure`: the first that did not answer
//       ("a store: <error>", "the maintenance actor: ...", "the event bus: ..."), else "".
// The relay gets its requests behind whatever the host sent it before asking here (the host's
// sends are in its mailbox when this request is made), so the order of the host's calls holds.
// Waits: the relay's answer within `relay_wait` (turn_wait.hpp), the others' without bound
// (they answer from their mailboxes).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "actors/commit_log/commit_log_actor.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/maintenance/maintenance_actor.hpp"
#include "actors/router/outcome_relay.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/timers/timer_actor.hpp"

namespace sessionrt::actors {

using host_steps_type = caf::typed_actor<
    caf::replies_to<settle_atom>::with<settle_report, std::vector<std::string>>,
    caf::replies_to<tick_atom>::with<std::string>,
    caf::replies_to<maintain_atom>::with<bool, std::string>>;

struct host_steps_links {
  outcome_relay_type relay;
  commit_log_actor commit_log;  // empty: durability none (nothing to ask)
  event_bus_actor bus;
  timer_actor_type timers;
  std::map<std::string, store_actor_type> stores;  // by agent
  maintenance_actor_type maintenance;
  caf::duration relay_wait;
};

host_steps_type::behavior_type host_steps(host_steps_type::pointer self, host_steps_links links);

}  // namespace sessionrt::actors
