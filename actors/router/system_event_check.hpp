// system_event_check: a heartbeat / cron / exec event checked like a chat event before it is
// routed (SPEC §9): where it goes, or the error that refuses it. Pure (no CAF, no I/O).
//   - an explicit session key must be a plausible key (the error names it); a key naming an
//     agent ("agent:<id>:...") sends the event to that agent, and contradicting the event's own
//     agent_id is an error;
//   - a cron job id must make a plausible key (no ':' in it);
//   - the text must be valid UTF-8 and at most session.maxMessageBytes (the error names the
//     limit); nothing is stored for a refused event.
// With `heartbeat_isolated` (agents.defaults.heartbeat.isolatedSession) a heartbeat for a
// session runs in its own `<key>:heartbeat` session [R§1.1]; `base_key` names the session it
// stands for (the row's heartbeatIsolatedBaseSessionKey).
#pragma once
#include <cstddef>
#include <string>

#include "actors/router/route_resolver.hpp"
#include "messages/chat_event.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

struct checked_system_target {
  std::string agent;
  std::string key;
  std::string base_key;  // set for an isolated heartbeat: the session it runs beside
};

result<checked_system_target> check_system_event(const system_event& ev, const routing_config& routing,
                                                 std::size_t max_message_bytes, bool heartbeat_isolated = false);

}  // namespace sessionrt::actors
