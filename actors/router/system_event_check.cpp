#include "actors/router/system_event_check.hpp"

#include <fmt/format.h>

#include "actors/router/event_routing.hpp"
#include "actors/router/session_key.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::actors {
namespace {

std::string_view kind_name(system_event_kind kind) {
  switch (kind) {
    case system_event_kind::heartbeat: return "heartbeat";
    case system_event_kind::cron: return "cron";
    case system_event_kind::exec: return "exec";
  }
  return "system";
}

status invalid_key(const system_event& ev, std::string_view key) {
  return status(errc::invalid_argument,
                fmt::format("{} event refused: session key {:?} is not a valid key (at most 512 bytes of UTF-8 text, "
                            "no control characters, no '//' or '..' path segments)",
                            kind_name(ev.kind), key.substr(0, 80)));
}

}  // namespace

result<checked_system_target> check_system_event(const system_event& ev, const routing_config& routing,
                                                 std::size_t max_message_bytes, bool heartbeat_isolated) {
  if (ev.text.size() > max_message_bytes)
    return status(errc::limit_exceeded, fmt::format("{} event refused: its text of {} bytes exceeds "
                                                    "session.maxMessageBytes ({} bytes)",
                                                    kind_name(ev.kind), ev.text.size(), max_message_bytes));
  if (!is_valid_utf8(ev.text))
    return status(errc::invalid_argument, fmt::format("{} event refused: its text is not valid UTF-8", kind_name(ev.kind)));
  if (!ev.session_key.empty() && !is_plausible_session_key(ev.session_key)) return invalid_key(ev, ev.session_key);
  if (ev.kind == system_event_kind::cron && ev.session_key.empty() && !ev.job_id.empty() &&
      (ev.job_id.find(':') != std::string::npos || !is_plausible_session_key(build_cron_request_key(ev.job_id))))
    return status(errc::invalid_argument,
                  fmt::format("cron event refused: job id {:?} cannot name a session (no ':', control characters or "
                              "path segments)",
                              ev.job_id.substr(0, 80)));
  system_event routed = ev;
  if (!ev.session_key.empty())
    if (auto parsed = parse_agent_session_key(ev.session_key)) {
      if (!ev.agent_id.empty() && normalize_agent_id(ev.agent_id) != parsed->agent_id)
        return status(errc::invalid_argument,
                      fmt::format("{} event refused: session key {:?} belongs to agent {:?}, not to agent_id {:?}",
                                  kind_name(ev.kind), ev.session_key.substr(0, 80), parsed->agent_id, ev.agent_id));
      routed.agent_id = parsed->agent_id;
    }
  const system_target t = system_event_target(routed, routing);
  checked_system_target out{t.agent, t.key, std::string()};
  if (ev.kind == system_event_kind::heartbeat && heartbeat_isolated && !is_synthetic_key(t.key)) {
    out.base_key = t.key;
    out.key = build_heartbeat_key(t.key);
  }
  if (!is_plausible_session_key(out.key)) return invalid_key(ev, out.key);
  return out;
}

}  // namespace sessionrt::actors
