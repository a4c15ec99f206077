// status, health, agents.list (loosely typed snapshots, as the reference says) and
// sessionrt.events.subscribe / unsubscribe (lifecycle events with the embedding API's
// event_filter: {types?, keyPrefix?, agentId?}; each arrives as a `sessionrt.event` event whose
// payload is lifecycle_event::to_json()).
#include <unistd.h>

#include "actors/session/session_model.hpp"
#include "actors/router/route_resolver.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/session_notify.hpp"
#include "messages/json_access.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

bj::object sessions_summary(gateway_core& c, std::int64_t now) {
  const std::string agent = actors::default_agent_of(c.rt->settings().routing);
  auto path = storage::store_path(c.rt->state_dir(), agent);
  bj::object s{{"path", path.ok() ? *path : std::string()}, {"count", 0}, {"recent", bj::array{}}};
  auto rows = c.rt->sessions();
  if (!rows.ok()) return s;
  std::sort(rows->begin(), rows->end(), [](const auto& a, const auto& b) {
    return a.entry.updated_at().value_or(0) > b.entry.updated_at().value_or(0);
  });
  bj::array recent;
  for (std::size_t i = 0; i < rows->size() && i < 5; ++i) {
    const auto at = (*rows)[i].entry.updated_at();
    recent.emplace_back(bj::object{{"key", (*rows)[i].key},
                                   {"updatedAt", at ? bj::value(*at) : bj::value(nullptr)},
                                   {"age", at ? bj::value(now - *at) : bj::value(nullptr)}});
  }
  s["count"] = static_cast<std::int64_t>(rows->size());
  s["recent"] = std::move(recent);
  return s;
}

method_outcome health(method_call& call) {
  const auto t0 = call.core.now_ms();
  auto sessions = sessions_summary(call.core, t0);
  const std::string agent = actors::default_agent_of(call.core.rt->settings().routing);
  bj::object out{{"ok", !call.core.rt->stopped()},
                 {"ts", t0},
                 {"durationMs", call.core.now_ms() - t0},
                 {"defaultAgentId", agent},
                 {"sessions", sessions},
                 {"agents", bj::array{bj::object{{"agentId", agent}, {"isDefault", true}, {"sessions", sessions}}}}};
  return bj::value(std::move(out));
}

method_outcome status_method(method_call& call) {
  const auto now = call.core.now_ms();
  const auto calls = call.core.rt->model_calls();
  return bj::value(bj::object{
      {"runtimeVersion", call.core.server_version},
      {"pid", static_cast<std::int64_t>(::getpid())},
      {"uptimeMs", now - call.core.started_ms},
      {"stateDir", call.core.rt->state_dir()},
      {"sessions", sessions_summary(call.core, now)},
      {"modelCalls", bj::object{{"running", calls.running}, {"waiting", calls.waiting},
                                {"peakRunning", calls.peak_running}, {"admitted", calls.admitted}}},
      {"runtime", runtime::to_text(call.core.rt->stats())}});
}

method_outcome agents_list(method_call& call) {
  const auto& routing = call.core.rt->settings().routing;
  const std::string def = actors::default_agent_of(routing);
  // model.primary: the agent's model as "provider/model" (the Control UI's composer wants one).
  auto agent_json = [&](const std::string& id) {
    const actors::session_model m = actors::default_model(call.core.rt->settings(), id);
    const std::string provider = m.provider.empty() ? call.core.default_provider : m.provider;
    const std::string model = m.model.empty() ? call.core.default_model : m.model;
    return bj::object{{"id", id}, {"name", id}, {"model", bj::object{{"primary", provider + "/" + model}}}};
  };
  bj::array agents;
  if (routing.agents.empty()) agents.emplace_back(agent_json(def));
  for (const auto& a : routing.agents) agents.emplace_back(agent_json(a.id));
  return bj::value(bj::object{{"defaultId", def},
                              {"mainKey", routing.session.main_key},
                              {"scope", routing.session.scope == actors::session_scope::global ? "global" : "per-sender"},
                              {"agents", std::move(agents)}});
}

// The configured catalog (models.providers), as OpenClaw's models.list lists model choices.
method_outcome models_list(method_call& call) {
  const auto& s = call.core.rt->settings();
  const actors::session_model d = actors::default_model(s);
  bj::array models;
  for (const auto& p : s.models.providers)
    for (const auto& m : p.models) {
      bj::array input;
      for (const auto& i : m.input) input.emplace_back(i);
      bj::object row{{"id", m.id},
                     {"name", m.name.empty() ? m.id : m.name},
                     {"provider", p.id},
                     {"api", actors::api_of(p, &m)},
                     {"contextWindow", m.effective_window()},
                     {"reasoning", m.reasoning},
                     {"input", std::move(input)}};
      if (m.max_tokens > 0) row["maxTokens"] = m.max_tokens;
      if (!m.aliases.empty()) row["alias"] = m.aliases.front();
      if (p.id == d.provider && m.id == d.model) row["default"] = true;
      models.emplace_back(std::move(row));
    }
  if (models.empty())  // the simulated model serves
    models.emplace_back(bj::object{{"id", call.core.default_model},
                                   {"name", call.core.default_model},
                                   {"provider", call.core.default_provider},
                                   {"contextWindow", d.context_window},
                                   {"reasoning", false},
                                   {"input", bj::array{"text"}},
                                   {"default", true}});
  return bj::value(bj::object{{"models", std::move(models)}});
}

method_outcome events_subscribe(method_call& call) {
  if (auto e = check_params("sessionrt.events.subscribe", call.params,
                            {{"types", ptype::array}, {"keyPrefix", ptype::string}, {"agentId", ptype::string}}, true))
    return *e;
  event_filter f;
  if (const auto* types = json::get_array(call.params, "types"))
    for (const auto& t : *types) {
      if (!t.is_string()) return params_error("sessionrt.events.subscribe", "at /types: must be array of strings");
      f.types.emplace_back(t.get_string());
    }
  f.key_prefix = std::string(json::get_string(call.params, "keyPrefix").value_or(""));
  f.agent_id = std::string(json::get_string(call.params, "agentId").value_or(""));
  if (call.conn->events_subscription) call.core.rt->unsubscribe(*call.conn->events_subscription);
  frame_sink* sink = call.core.sink;
  const auto conn = call.conn_id;
  call.conn->events_subscription =
      call.core.rt->subscribe(f, [sink, conn](const lifecycle_event& e) { sink->event_to(conn, "sessionrt.event", e.to_json()); });
  bj::array types;
  for (const auto& t : f.types) types.emplace_back(bj::string(t));
  return bj::value(bj::object{{"subscribed", true}, {"types", std::move(types)}, {"keyPrefix", f.key_prefix},
                              {"agentId", f.agent_id}});
}

method_outcome events_unsubscribe(method_call& call) {
  bool had = call.conn->events_subscription.has_value();
  if (had) call.core.rt->unsubscribe(*call.conn->events_subscription);
  call.conn->events_subscription.reset();
  return bj::value(bj::object{{"subscribed", false}, {"was", had}});
}

}  // namespace

void add_status_methods(std::vector<method_entry>& t) {
  t.push_back({"health", method_scope::read, false, health});
  t.push_back({"status", method_scope::read, false, status_method});
  t.push_back({"agents.list", method_scope::read, false, agents_list});
  t.push_back({"models.list", method_scope::read, false, models_list});
  t.push_back({"sessionrt.events.subscribe", method_scope::read, true, events_subscribe});
  t.push_back({"sessionrt.events.unsubscribe", method_scope::read, true, events_unsubscribe});
}

}  // namespace sessionrt::gateway
