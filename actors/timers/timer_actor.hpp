// timer_actor: the daily / idle expiry timers (SPEC §3 Decision). Sessions tell it when they
// go stale: (schedule, key, at_ms, reason) (at_ms < 0 cancels). When that time comes it
// publishes session.expired {reason, at} and asks the router to passivate the key. It never
// creates or rolls a session: the rollover stays lazy, decided by the next message.
// Time: (tick) fires whatever is due by the clock. With real time the actor schedules its own
// tick for the next due time; with virtual time (simulations, tests) the runtime sends ticks
// as it moves the clock.
#pragma once
#include <memory>

#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"

namespace sessionrt::actors {

struct timer_actor_config {
  clock* time = nullptr;
  bool self_scheduling = true;  // false under virtual time
  caf::actor router, bus;
  std::shared_ptr<event_hub> hub;
  std::string agent_of_keys;  // agent id used in events when a key does not name one
};

//   (schedule, key, at_ms, reason)   (tick)   (stats) -> std::size_t pending timers
caf::behavior timer_actor(caf::event_based_actor* self, timer_actor_config cfg);

}  // namespace sessionrt::actors
