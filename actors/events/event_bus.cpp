#include "actors/events/event_bus.hpp"

namespace sessionrt::actors {

event_bus_actor::behavior_type event_bus(event_bus_actor::stateful_pointer<event_bus_state> self,
                                         std::shared_ptr<event_hub> hub) {
  self->state.hub = std::move(hub);
  return {
      [self](publish_atom, const lifecycle_event& e) { self->state.hub->deliver(e); },
      [](settle_atom) {},  // the mailbox is in order: everything before this was delivered
  };
}

void publish(const event_bus_actor& bus, const event_hub& hub, lifecycle_event e) {
  if (bus && hub.wants(e.type)) caf::anon_send(bus, publish_atom::value, std::move(e));
}

}  // namespace sessionrt::actors
