// actor_handles: the runtime's actors as typed handles, built once by runtime::start (the
// interfaces are in each actor's header). A host that speaks to the actors directly (its own
// CAF actors beside the runtime) includes this and reads runtime::handles(); the facade's
// calls (send, spawn_subagent, ...) need none of it. Valid until runtime::stop(), which
// leaves every handle empty.
#pragma once
#include <map>
#include <string>

#include "actors/commit_log/commit_log_actor.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/maintenance/maintenance_actor.hpp"
#include "actors/router/host_steps.hpp"
#include "actors/router/outcome_relay.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/store/store_actor.hpp"
#include "actors/subagent/subagent_actor.hpp"
#include "actors/timers/timer_actor.hpp"

namespace sessionrt::runtime {

struct actor_handles {
  actors::event_bus_actor bus;                   // lifecycle events to the subscribers
  actors::commit_log_actor commit_log;           // durability batch only (else empty)
  actors::maintenance_actor_type maintenance;    // the store maintenance supervisor
  std::map<std::string, actors::store_actor_type> stores;  // agentId -> its sessions.json writer
  actors::timer_actor_type timers;               // daily / idle expiry
  actors::router_actor_type router;              // (chat, chat_event) -> turn_outcome, and the rest
  actors::subagent_actor_type subagents;         // (spawn, parent_key, subagent_spec) -> turn_outcome
  actors::outcome_relay_type relay;              // the host callbacks' side (runtime::send(ev, done))
  actors::host_steps_type steps;                 // settle(), advance_clock(), run_due_maintenance(): one request each
};

}  // namespace sessionrt::runtime
