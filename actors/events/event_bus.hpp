// event_bus: the actor that delivers lifecycle events to subscribers (event_hub callbacks),
// one at a time, in arrival order — so each session's events reach subscribers in the order
// the session published them. Publishers use publish(), which skips events nobody wants.
#pragma once
#include "actors/caf_types.hpp"
#include "actors/events/event_hub.hpp"

namespace sessionrt::actors {

caf::behavior event_bus(caf::event_based_actor* self, std::shared_ptr<event_hub> hub);

//   (publish, event)   (sync) -> ()  answered once every earlier event was delivered
// Sends `e` to the bus if some subscription wants its type.
void publish(caf::event_based_actor* self, const caf::actor& bus, const event_hub& hub, lifecycle_event e);
// The same from outside any actor (the runtime's start-up events), sent anonymously.
void publish(const caf::actor& bus, const event_hub& hub, lifecycle_event e);

}  // namespace sessionrt::actors
