#include "actors/events/event_bus.hpp"

namespace sessionrt::actors {

caf::behavior event_bus(caf::event_based_actor*, std::shared_ptr<event_hub> hub) {
  return {
      [hub](publish_atom, const lifecycle_event& e) { hub->deliver(e); },
      [](sync_atom) {},  // answered after every event published before it was delivered
  };
}

void publish(caf::event_based_actor* self, const caf::actor& bus, const event_hub& hub, lifecycle_event e) {
  if (bus && hub.wants(e.type)) self->send(bus, publish_atom::value, std::move(e));
}

}  // namespace sessionrt::actors
