// outcome_relay: the host's side of the requests answered with a turn_outcome, for the
// runtime's callback API (runtime::send(ev, done), spawn_subagent(..., done)). A host thread
// keeps its callback in `pending` and sends only its id:
//   (chat, id, chat_event), (system, id, system_event)  ask the router (a chat event as a
//                                                       chat_event_ptr: moved once here)
//   (spawn, id, parent key, subagent_spec)              asks the sub-agent spawner
// and the relay calls the callback held under `id` with the outcome (or with an io_error
// outcome naming who did not answer). (settle), (tick, settle) and (stop) go on to the router
// (delegated: the router answers), behind the turns sent before them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "actors/router/pending_outcomes.hpp"
#include "actors/router/router_actor.hpp"
#include "actors/subagent/subagent_actor.hpp"

namespace sessionrt::actors {

// The signatures of the header comment, one per line.
using outcome_relay_type = caf::typed_actor<
    caf::reacts_to<chat_atom, std::uint64_t, chat_event>,
    caf::reacts_to<system_atom, std::uint64_t, system_event>,
    caf::reacts_to<spawn_atom, std::uint64_t, std::string, subagent_spec>,
    caf::replies_to<settle_atom>::with<settle_report>,
    caf::replies_to<tick_atom, settle_atom>::with<bool>,
    caf::replies_to<stop_atom>::with<bool>>;

outcome_relay_type::behavior_type outcome_relay(outcome_relay_type::pointer self, router_actor_type router,
                                                subagent_actor_type subagents,
                                                std::shared_ptr<pending_outcomes> pending);

}  // namespace sessionrt::actors
