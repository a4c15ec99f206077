#include "actors/events/event_bus.hpp"

namespace sessionrt::actors {

caf::behavior event_bus(caf::event_based_actor*, std::shared_ptr<event_hub> hub) {
  return {
      [hub](publish_atom, const lifecycle_event& e) { hub->deliver(e); },
      [](settle_atom) {},  // answered after every event published before it was delivered
  };
}

namespace {
bool wanted(const caf::actor& bus, const event_hub& hub, const lifecycle_event& e) { return bus && hub.wants(e.type); }
}  // namespace

void publish(caf::event_based_actor* self, const caf::actor& bus, const event_hub& hub, lifecycle_event e) {
  if (wanted(bus, hub, e)) self->send(bus, publish_atom::value, std::move(e));
}

void publish(const caf::actor& bus, const event_hub& hub, lifecycle_event e) {
  if (wanted(bus, hub, e)) caf::anon_send(bus, publish_atom::value, std::move(e));
}

}  // namespace sessionrt::actors
