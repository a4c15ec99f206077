// event_bus: the actor that delivers lifecycle events to subscribers (event_hub callbacks),
// one at a time, in arrival order — so each session's events reach subscribers in the order
// the session published them. Publishers use publish(), which skips events nobody wants.
#pragma once
#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"

namespace sessionrt::actors {

using event_bus_actor = caf::typed_actor<
    caf::reacts_to<publish_atom, lifecycle_event>,  // delivered to the subscriptions that want it
    caf::reacts_to<settle_atom>>;                   // answered once every earlier event was delivered

struct event_bus_state {
  std::shared_ptr<event_hub> hub;
};

event_bus_actor::behavior_type event_bus(event_bus_actor::stateful_pointer<event_bus_state> self,
                                         std::shared_ptr<event_hub> hub);

// Sends `e` to the bus if some subscription wants its type (from any actor that sends; the
// bus is typed, so a statically typed actor sends to it as itself).
template <class Self>
void publish(Self* self, const event_bus_actor& bus, const event_hub& hub, lifecycle_event e) {
  if (!bus || !hub.wants(e.type)) return;
  self->send(bus, publish_atom::value, std::move(e));
}
// The same from outside any actor (the runtime's start-up events), sent anonymously.
void publish(const event_bus_actor& bus, const event_hub& hub, lifecycle_event e);

}  // namespace sessionrt::actors
