// event_routing: what the router derives from one inbound event, as pure functions of the event
// and the routing config (no CAF, no I/O; route_resolver holds the [R§1.2] rules they apply):
// - route_cache_key: the event's routing fields joined, the key the router memoizes routes by
//   (equal keys always give equal routes, different fields always different keys);
// - route_input_of: the event as route_resolver's input;
// - facts_of: what the session is told about the chat (chat type, thread, delivery ids);
// - system_event_target: the agent and session key a heartbeat / cron / exec event goes to:
//   its own plausible key (normalized, main aliases canonical), else a cron job's key, else
//   the agent's main key. The router still checks that the agent exists.
#pragma once
#include <string>

#include "actors/router/route_resolver.hpp"
#include "actors/session/route_facts.hpp"
#include "messages/chat_event.hpp"

namespace sessionrt::actors {

std::string route_cache_key(const chat_event& ev);
route_input route_input_of(const chat_event& ev);
route_facts facts_of(const chat_event& ev, const route& r);

struct system_target {
  std::string agent;
  std::string key;
};
system_target system_event_target(const system_event& ev, const routing_config& routing);

}  // namespace sessionrt::actors
