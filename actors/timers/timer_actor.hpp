// timer_actor: the daily / idle expiry timers (SPEC §3 Decision). Sessions tell it when they
// go stale: (schedule, key, at_ms, reason) (at_ms < 0 cancels). When that time comes it
// publishes session.expired {reason, at} and asks the router to passivate the key. It never
// creates or rolls a session: the rollover stays lazy, decided by the next message.
// Time: (tick) fires whatever is due by the clock. With real time the actor schedules its own
// tick for the next due time; with virtual time (simulations, tests) the runtime sends ticks
// as it moves the clock.
#pragma once
#include <memory>
#include <optional>

#include "actors/caf_types.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/timers/expiry_schedule.hpp"
#include "messages/clock.hpp"

namespace sessionrt::actors {

struct timer_actor_config {
  clock* time = nullptr;
  bool self_scheduling = true;  // false under virtual time
  passivate_port router;  // may come later, by (spawned, router)
  event_bus_actor bus;
  std::shared_ptr<event_hub> hub;
  std::string agent_of_keys;  // agent id used in events when a key does not name one
};

using timer_actor_type = caf::typed_actor<
    caf::reacts_to<spawned_atom, passivate_port>,  // the router (spawned after the timers)
    caf::reacts_to<schedule_atom, std::string, std::int64_t, std::string>,  // key, at_ms (< 0: cancel), reason
    caf::reacts_to<tick_atom>,                        // fire what is due by the clock
    caf::replies_to<stats_atom>::with<std::size_t>>;  // pending timers

struct timer_state {
  timer_actor_config cfg;
  expiry_schedule schedule;
  std::optional<std::int64_t> wake_at;  // a tick is scheduled for this time (real time)
};

timer_actor_type::behavior_type timer_actor(timer_actor_type::stateful_pointer<timer_state> self,
                                            timer_actor_config cfg);

}  // namespace sessionrt::actors
