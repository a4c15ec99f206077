#include "actors/router/event_routing.hpp"

#include "actors/router/session_key.hpp"

namespace sessionrt::actors {

std::string route_cache_key(const chat_event& ev) {
  std::string k;
  k.reserve(96);
  for (const std::string* part : {&ev.channel, &ev.account_id, &ev.peer_kind, &ev.peer_id, &ev.parent_peer_kind,
                                  &ev.parent_peer_id, &ev.guild_id, &ev.team_id, &ev.thread_id, &ev.session_key,
                                  &ev.agent_id}) {
    k += *part;
    k += '\x1f';
  }
  for (const auto& role : ev.member_role_ids) {
    k += role;
    k += '\x1e';
  }
  return k;
}

route_input route_input_of(const chat_event& ev) {
  route_input in;
  in.channel = ev.channel;
  in.account_id = ev.account_id;
  if (!ev.peer_id.empty() || !ev.peer_kind.empty()) in.peer = route_peer{ev.peer_kind, ev.peer_id};
  if (!ev.parent_peer_id.empty()) in.parent_peer = route_peer{ev.parent_peer_kind, ev.parent_peer_id};
  in.guild_id = ev.guild_id;
  in.team_id = ev.team_id;
  in.member_role_ids = ev.member_role_ids;
  in.thread_id = ev.thread_id;
  in.explicit_session_key = ev.session_key;
  in.forced_agent_id = ev.agent_id;
  return in;
}

route_facts facts_of(const chat_event& ev, const route& r) {
  route_facts f;
  f.channel = r.channel;
  f.account_id = r.account_id;
  const std::string kind = normalize_chat_type(ev.peer_kind).value_or(ev.peer_kind);
  f.is_group = kind != "direct" && !kind.empty();
  f.chat_type = kind == "channel" ? "channel" : f.is_group ? "group" : "direct";
  f.peer_id = ev.peer_id;
  f.thread_id = ev.thread_id;
  f.is_thread = !ev.thread_id.empty() || is_thread_key(r.session_key);
  return f;
}

system_target system_event_target(const system_event& ev, const routing_config& routing) {
  system_target t;
  t.agent = ev.agent_id.empty() ? default_agent_of(routing) : normalize_agent_id(ev.agent_id);
  if (!ev.session_key.empty() && is_plausible_session_key(ev.session_key))
    t.key = canonicalize_main_alias(normalize_session_key(ev.session_key), t.agent, routing.session.main_key,
                                    routing.session.scope);
  else if (ev.kind == system_event_kind::cron && !ev.job_id.empty())
    t.key = build_cron_key(t.agent, ev.job_id);
  else
    t.key = build_main_key(t.agent, routing.session.main_key);
  return t;
}

}  // namespace sessionrt::actors
