// sessions.cleanup: `sessionrt sessions cleanup` handed to the running gateway [R§5.5], as
// OpenClaw 2026.9's CLI hands it (params {agent, allAgents, enforce, activeKey, fixMissing,
// fixDmScope}; sessionrt also takes agentId for agent and dryRun). The runtime's maintenance
// actor runs it as one pass (runtime::cleanup): a forced plan per store, applied unless dryRun
// when enforce is true or session.maintenance.mode is "enforce". The answer is what
// `sessions cleanup --json` prints: one store's summary, or {allAgents, mode, dryRun, stores}.
#include <boost/json.hpp>

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "messages/json_access.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

method_outcome sessions_cleanup(method_call& call) {
  if (auto e = check_params("sessions.cleanup", call.params,
                            {{"agent", ptype::nonempty_string}, {"agentId", ptype::nonempty_string},
                             {"allAgents", ptype::boolean}, {"enforce", ptype::boolean}, {"dryRun", ptype::boolean},
                             {"activeKey", ptype::nonempty_string}, {"fixMissing", ptype::boolean},
                             {"fixDmScope", ptype::boolean}},
                            true))
    return *e;
  const auto& p = call.params;
  actors::cleanup_request req;
  req.agent_id = std::string(json::get_string(p, "agent").value_or(json::get_string(p, "agentId").value_or("")));
  if (!req.agent_id.empty()) req.agent_id = actors::normalize_agent_id(req.agent_id);
  const bool all_agents = json::get_bool(p, "allAgents").value_or(false);
  if (all_agents && !req.agent_id.empty())
    return params_error("sessions.cleanup", "allAgents and agent exclude each other");
  if (!all_agents && req.agent_id.empty()) req.agent_id = actors::default_agent_of(call.core.rt->settings().routing);
  req.mode = json::get_bool(p, "enforce").value_or(false) ? actors::maintenance_mode::enforce
                                                          : call.core.rt->settings().maintenance.mode;
  req.apply = !json::get_bool(p, "dryRun").value_or(false) && req.mode == actors::maintenance_mode::enforce;
  req.fix_missing = json::get_bool(p, "fixMissing").value_or(false);
  req.fix_dm_scope = json::get_bool(p, "fixDmScope").value_or(false);
  req.active_key = std::string(json::get_string(p, "activeKey").value_or(""));
  if (!req.active_key.empty() && !actors::is_plausible_session_key(req.active_key))
    return params_error("sessions.cleanup", "activeKey \"" + req.active_key + "\" is not a session key");
  auto out = call.core.rt->cleanup(req);
  if (!out.ok()) return error_of(out.error().message(), "UNAVAILABLE");
  for (const auto& s : out->stores)
    if (!s.error.empty()) return error_of("cleanup of " + s.store_path + " stopped: " + s.error, "UNAVAILABLE");
  bool mutated = false;
  for (const auto& s : out->stores) mutated |= s.applied && !s.applied_actions.empty();
  if (mutated)
    call.core.sink->broadcast(frame_sink::audience::sessions_subscribers, "sessions.changed",
                              bj::object{{"reason", "cleanup"}, {"ts", call.core.now_ms()}});
  return bj::value(actors::cleanup_result_json(*out, all_agents));
}

}  // namespace

void add_maintenance_methods(std::vector<method_entry>& t) {
  t.push_back({"sessions.cleanup", method_scope::admin, false, sessions_cleanup});
}

}  // namespace sessionrt::gateway
