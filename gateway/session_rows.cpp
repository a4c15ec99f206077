#include "gateway/session_rows.hpp"

#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "actors/session/queue_settings.hpp"
#include "actors/session/session_model.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

row_defaults defaults_of(const runtime::runtime& rt, const std::string& provider, const std::string& model) {
  row_defaults d;
  const auto& s = rt.settings();
  const actors::session_model m = actors::default_model(s, actors::default_agent_of(s.routing));
  d.provider = m.provider.empty() ? provider : m.provider;
  d.model = m.model.empty() ? model : m.model;
  d.context_tokens = m.context_window;
  d.queue_mode = std::string(actors::queue_mode_name(s.queue.mode));
  d.main_key = actors::build_main_key(actors::default_agent_of(s.routing), s.routing.session.main_key);
  return d;
}

namespace {

std::string kind_of(const runtime::session_row& row) {
  const auto chat = row.entry.chat_type();
  if (chat && (*chat == "group" || *chat == "channel")) return "group";
  if (row.key.find(":group:") != std::string::npos || row.key.find(":channel:") != std::string::npos) return "group";
  if (row.key == "global") return "global";
  return "direct";
}

std::pair<std::string, std::string> model_of(const runtime::session_row& row, const row_defaults& d) {
  const auto& e = row.entry;
  std::string provider(e.provider_override().value_or(e.model_provider().value_or(d.provider)));
  std::string model(e.model_override().value_or(e.model().value_or(d.model)));
  return {provider, model};
}

void copy_if(bj::object& out, const bj::object& in, std::string_view key) {
  if (const auto* v = in.if_contains(key)) out[key] = *v;
}

}  // namespace

bj::object session_row_json(const runtime::session_row& row, const row_defaults& d,
                            const std::vector<std::string>& active_run_ids) {
  const auto& e = row.entry;
  bj::object o;
  o["key"] = row.key;
  o["kind"] = kind_of(row);
  const auto created = e.session_started_at().value_or(e.updated_at().value_or(0));
  o["createdAt"] = created;
  if (auto l = e.label()) o["label"] = *l;
  o["agentId"] = row.agent_id;
  o["isMain"] = row.key == d.main_key;
  std::string display(e.label().value_or(e.display_name().value_or(e.subject().value_or(""))));
  if (!display.empty()) o["displayName"] = display;
  if (auto c = e.chat_type()) o["chatType"] = *c;
  if (auto c = e.channel()) o["channel"] = *c;
  o["updatedAt"] = e.updated_at().value_or(0);
  copy_if(o, e.json(), "lastInteractionAt");
  o["sessionId"] = std::string(e.session_id().value_or(""));
  if (auto t = e.thinking_level()) o["thinkingLevel"] = *t;
  o["thinkingDefault"] = "off";
  for (auto key : {"inputTokens", "outputTokens", "totalTokens", "totalTokensFresh", "cacheRead", "cacheWrite",
                   "compactionCount", "estimatedCostUsd", "startedAt", "endedAt", "runtimeMs", "lastChannel",
                   "queueMode", "abortedLastRun"})
    copy_if(o, e.json(), key);
  if (!o.contains("totalTokensFresh")) o["totalTokensFresh"] = false;
  const bool running = !active_run_ids.empty();
  o["status"] = running ? "running" : std::string(e.status().value_or("done"));
  o["effectiveQueueMode"] = std::string(e.queue_mode().value_or(d.queue_mode));
  auto [provider, model] = model_of(row, d);
  o["modelProvider"] = provider;
  o["model"] = model;
  o["modelOverrideSource"] = e.model_override() ? bj::value("user") : bj::value(nullptr);
  o["contextTokens"] = e.context_tokens().value_or(d.context_tokens);
  // OpenClaw's pin: the row's pinnedAt (sessions.patch pinned).
  if (const auto* pinned = e.json().if_contains("pinnedAt"); pinned && pinned->is_int64()) {
    o["pinned"] = true;
    o["pinnedAt"] = *pinned;
  } else {
    o["pinned"] = false;
  }
  // OpenClaw 2026.9's archive (session.maintenance.archiveDashboardAfter, sessions.patch).
  o["archived"] = e.json().contains("archivedAt");
  copy_if(o, e.json(), "archivedAt");
  copy_if(o, e.json(), "archiveReason");
  o["hasActiveRun"] = running;
  bj::array ids;
  for (const auto& id : active_run_ids) ids.emplace_back(bj::string(id));
  o["activeRunIds"] = std::move(ids);
  return o;
}

bj::object entry_json(const runtime::session_row& row) { return row.entry.json(); }

bj::object resolved_json(const runtime::session_row& row, const row_defaults& d) {
  auto [provider, model] = model_of(row, d);
  return {{"modelProvider", provider}, {"model", model}};
}

bj::object defaults_json(const row_defaults& d) {
  return {{"modelProvider", d.provider},
          {"model", d.model},
          {"contextTokens", d.context_tokens},
          {"thinkingLevels", bj::array{bj::object{{"id", "off"}, {"label", "off"}}}},
          {"thinkingOptions", bj::array{"off"}},
          {"thinkingDefault", "off"}};
}

}  // namespace sessionrt::gateway
