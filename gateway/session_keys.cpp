#include "gateway/session_keys.hpp"

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"

namespace sessionrt::gateway {

result<resolved_key> resolve_session_key(const runtime::runtime& rt, const std::string& raw, const std::string& agent_id) {
  if (!actors::is_plausible_session_key(raw))
    return status(errc::invalid_argument,
                  "invalid sessionKey: it must be 1 to 512 bytes of UTF-8 without control characters, backslashes, "
                  "a leading '/', '//' or '..' path segments");
  const auto& routing = rt.settings().routing;
  const std::string fallback_agent = actors::default_agent_of(routing);
  const std::string key =
      actors::explicit_store_key(raw, agent_id.empty() ? fallback_agent : actors::normalize_agent_id(agent_id), routing);
  auto parsed = actors::parse_agent_session_key(key);
  const std::string agent = parsed ? parsed->agent_id : fallback_agent;
  bool known = routing.agents.empty() && agent == fallback_agent;
  for (const auto& a : routing.agents) known = known || actors::normalize_agent_id(a.id) == agent;
  if (!known) return status(errc::not_found, "invalid sessionKey " + raw + ": no agent " + agent + " is configured");
  return resolved_key{key, agent};
}

}  // namespace sessionrt::gateway
