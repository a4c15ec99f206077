// sessions.list / describe / patch / reset / delete / compact / subscribe (the reference's
// "Session methods"; answers shaped as real-gateway-session-methods.jsonl shows).
#include <algorithm>
#include <chrono>

#include "gateway/chat_runs.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_notify.hpp"
#include "gateway/session_rows.hpp"
#include "messages/json_access.hpp"
#include "storage/session_paths.hpp"
#include "actors/router/route_resolver.hpp"
#include <future>
#include <mutex>

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {


std::string store_path_of(const gateway_core& c, const std::string& agent) {
  auto p = storage::store_path(c.rt->state_dir(), agent);
  return p.ok() ? *p : std::string();
}

row_defaults defaults(const gateway_core& c) { return defaults_of(*c.rt, c.default_provider, c.default_model); }

// The key param, resolved; or the error to answer.
std::variant<resolved_key, frame_error> key_param(method_call& call, std::string_view field = "key") {
  const auto k = json::get_string(call.params, field);
  auto r = resolve_session_key(*call.core.rt, std::string(k.value_or("")),
                               std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!r.ok()) {
    call.core.metrics->refused(refusal::bad_session_key);
    return from_status(r.error());
  }
  return *r;
}

std::int64_t int_param(const bj::object& p, std::string_view key, std::int64_t fallback) {
  return json::get_int(p, key).value_or(fallback);
}

method_outcome sessions_list(method_call& call) {
  if (auto e = check_params("sessions.list", call.params,
                            {{"limit", ptype::positive_integer}, {"offset", ptype::integer},
                             {"activeMinutes", ptype::positive_integer}, {"agentId", ptype::nonempty_string},
                             {"search", ptype::string}, {"includeDerivedTitles", ptype::boolean},
                             {"includeLastMessage", ptype::boolean}, {"label", ptype::string},
                             {"archived", ptype::any}}))
    return *e;
  // OpenClaw 2026.9: archived rows (archivedAt) are left out unless `archived` is true (only
  // them) or "all".
  const bj::value* archived_param = call.params.if_contains("archived");
  if (archived_param && !archived_param->is_bool() && !(archived_param->is_string() && archived_param->get_string() == "all"))
    return params_error("sessions.list", "at /archived: must be boolean or \"all\"");
  const bool all_rows = archived_param && archived_param->is_string();
  const bool archived_only = archived_param && archived_param->is_bool() && archived_param->get_bool();
  auto rows = call.core.rt->sessions();
  if (!rows.ok()) return from_status(rows.error());
  const std::string agent(json::get_string(call.params, "agentId").value_or(""));
  const std::string search(json::get_string(call.params, "search").value_or(""));
  const std::string label(json::get_string(call.params, "label").value_or(""));
  const auto active = json::get_int(call.params, "activeMinutes");
  const std::int64_t now = call.core.now_ms();
  std::vector<runtime::session_row> kept;
  for (auto& r : *rows) {
    if (!agent.empty() && r.agent_id != agent) continue;
    if (!all_rows && r.entry.json().contains("archivedAt") != archived_only) continue;
    if (active && now - r.entry.updated_at().value_or(0) > *active * 60000) continue;
    if (!label.empty() && r.entry.label().value_or("") != label) continue;
    if (!search.empty()) {
      const std::string hay = r.key + " " + std::string(r.entry.label().value_or("")) + " " +
                              std::string(r.entry.display_name().value_or(""));
      if (hay.find(search) == std::string::npos) continue;
    }
    kept.push_back(std::move(r));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.entry.updated_at().value_or(0) > b.entry.updated_at().value_or(0);
  });
  const std::int64_t total = static_cast<std::int64_t>(kept.size());
  const std::int64_t limit = int_param(call.params, "limit", 100);
  const std::int64_t offset = std::min(int_param(call.params, "offset", 0), total);
  const std::int64_t end = std::min(total, offset + limit);
  const auto d = defaults(call.core);
  const bool titles = json::get_bool(call.params, "includeDerivedTitles").value_or(false);
  bj::array sessions;
  for (std::int64_t i = offset; i < end; ++i) {
    const auto& r = kept[static_cast<std::size_t>(i)];
    bj::object o = session_row_json(r, d, call.core.runs->open_runs(r.key));
    // Only for the page asked for: each title reads the head of one transcript.
    if (titles)
      if (auto t = call.core.rt->derived_title(r.key); t.ok() && *t) o["derivedTitle"] = **t;
    sessions.emplace_back(std::move(o));
  }
  const auto& agents = call.core.rt->settings().routing.agents;
  bj::object out;
  out["ts"] = now;
  out["path"] = agents.size() > 1 && agent.empty() ? std::string("(multiple)")
                                                   : store_path_of(call.core, agent.empty() ? actors::default_agent_of(call.core.rt->settings().routing) : agent);
  out["count"] = static_cast<std::int64_t>(sessions.size());
  out["totalCount"] = total;
  out["limitApplied"] = limit;
  out["nextOffset"] = end < total ? bj::value(end) : bj::value(nullptr);
  out["hasMore"] = end < total;
  out["owners"] = bj::array{};
  out["defaults"] = defaults_json(d);
  out["sessions"] = std::move(sessions);
  return bj::value(std::move(out));
}

method_outcome sessions_describe(method_call& call) {
  if (auto e = check_params("sessions.describe", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"includeDerivedTitles", ptype::boolean}, {"includeLastMessage", ptype::boolean}}))
    return *e;
  auto k = key_param(call);
  if (auto* err = std::get_if<frame_error>(&k)) return *err;
  const auto& key = std::get<resolved_key>(k);
  auto row = call.core.rt->session(key.key, key.agent_id);
  if (!row.ok()) return from_status(row.error());
  if (!row->has_value()) return error_of("session not found: " + key.key);
  runtime::session_row r{key.agent_id, key.key, std::move(**row)};
  return bj::value(bj::object{{"session", session_row_json(r, defaults(call.core), call.core.runs->open_runs(key.key))}});
}

// sessions.patch: the fields of SessionsPatchParamsSchema (others are refused as the real
// server does); sessionrt applies label, model, thinkingLevel, queueMode, pinned (the row's
// pinnedAt, as OpenClaw stores it) and archived (OpenClaw 2026.9's archive in place and restore,
// with expectedSessionId: actors/maintenance/manual_archive.hpp) and accepts the rest without
// effect.
// OpenClaw caps a session label at 512 characters: a longer one is refused, not cut.
constexpr std::size_t kMaxLabelChars = 512;

method_outcome sessions_patch(method_call& call) {
  static constexpr std::string_view accepted_without_effect[] = {
      "agentId", "expectedLifecycleRevision", "autoLabel", "icon", "color", "category",
      "statusNote", "unread", "fastMode", "verboseLevel", "reasoningLevel", "responseUsage",
      "elevatedLevel", "sendPolicy", "groupActivation", "traceLevel", "contextWindow"};
  std::string problems;
  for (const auto& kv : call.params) {
    const std::string_view k = kv.key();
    if (k == "key" || k == "label" || k == "model" || k == "thinkingLevel" || k == "queueMode" || k == "pinned" ||
        k == "archived" || k == "expectedSessionId")
      continue;
    if (std::find(std::begin(accepted_without_effect), std::end(accepted_without_effect), k) !=
        std::end(accepted_without_effect))
      continue;
    problems += (problems.empty() ? "" : "; ") + std::string("at root: unexpected property '") + std::string(k) + "'";
  }
  auto e = check_params("sessions.patch", call.params,
                        {{"key", ptype::nonempty_string, true}, {"label", ptype::nullable_string, false, kMaxLabelChars},
                         {"model", ptype::nullable_string}, {"thinkingLevel", ptype::nullable_string},
                         {"queueMode", ptype::nullable_string}, {"pinned", ptype::boolean},
                         {"archived", ptype::boolean}, {"expectedSessionId", ptype::nonempty_string}});
  if (e || !problems.empty()) {
    frame_error out = e ? *e : params_error("sessions.patch", "");
    if (!problems.empty()) out.message += (e ? "; " : "") + problems;
    return out;
  }
  auto k = key_param(call);
  if (auto* err = std::get_if<frame_error>(&k)) return *err;
  const auto& key = std::get<resolved_key>(k);
  runtime::runtime::session_patch patch;
  auto field = [&](std::string_view name, std::optional<std::optional<std::string>>& into) {
    if (const auto* v = call.params.if_contains(name))
      into = v->is_null() ? std::optional<std::string>() : std::optional<std::string>(std::string(v->get_string()));
  };
  field("label", patch.label);
  field("model", patch.model);
  field("thinkingLevel", patch.thinking_level);
  field("queueMode", patch.queue_mode);
  patch.pinned = json::get_bool(call.params, "pinned");  // kept as OpenClaw keeps it: pinnedAt
  patch.archived = json::get_bool(call.params, "archived");
  if (auto expected = json::get_string(call.params, "expectedSessionId")) patch.expected_session_id = std::string(*expected);
  auto row = call.core.rt->patch_session(key.key, patch);
  if (!row.ok()) return from_status(row.error());
  const auto d = defaults(call.core);
  notify_session_changed(call.core, *row, "patch");
  return bj::value(bj::object{{"ok", true},
                              {"path", store_path_of(call.core, key.agent_id)},
                              {"key", key.key},
                              {"entry", entry_json(*row)},
                              {"resolved", resolved_json(*row, d)}});
}

// Runs a chat command on the key's session and waits for its outcome.
result<turn_outcome> run_command(gateway_core& c, const resolved_key& key, std::string text) {
  chat_event ev;
  ev.channel = "webchat";
  ev.peer_id = "gateway";
  ev.session_key = key.key;
  ev.agent_id = key.agent_id;
  ev.text = std::move(text);
  ev.sender_authorized = true;
  auto out = c.rt->send(std::move(ev)).get();
  if (!out.st.ok()) return out.st;
  return out;
}

method_outcome sessions_reset(method_call& call) {
  if (auto e = check_params("sessions.reset", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"reason", ptype::nonempty_string}, {"expectedSessionId", ptype::nonempty_string}},
                            true))
    return *e;
  const std::string reason(json::get_string(call.params, "reason").value_or("reset"));
  if (reason != "new" && reason != "reset")
    return params_error("sessions.reset", "at /reason: must be equal to one of the allowed values");
  auto k = key_param(call);
  if (auto* err = std::get_if<frame_error>(&k)) return *err;
  const auto& key = std::get<resolved_key>(k);
  if (auto expected = json::get_string(call.params, "expectedSessionId")) {
    auto row = call.core.rt->session(key.key, key.agent_id);
    if (row.ok() && row->has_value() && (*row)->session_id().value_or("") != *expected)
      return error_of("session " + key.key + " is no longer session " + std::string(*expected));
  }
  auto out = run_command(call.core, key, reason == "new" ? "/new" : "/reset");
  if (!out.ok()) return from_status(out.error());
  auto row = call.core.rt->session(key.key, key.agent_id);
  if (!row.ok()) return from_status(row.error());
  if (!row->has_value()) return error_of("session not found after the reset: " + key.key, "UNAVAILABLE");
  runtime::session_row r{key.agent_id, key.key, std::move(**row)};
  notify_session_changed(call.core, r, "reset");
  return bj::value(bj::object{
      {"ok", true}, {"key", key.key}, {"entry", entry_json(r)}, {"resolved", resolved_json(r, defaults(call.core))}});
}

method_outcome sessions_delete(method_call& call) {
  if (auto e = check_params("sessions.delete", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"deleteTranscript", ptype::boolean}, {"expectedSessionId", ptype::nonempty_string},
                             {"expectedLifecycleRevision", ptype::nonempty_string},
                             {"expectedSessionUpdatedAt", ptype::integer}, {"emitLifecycleHooks", ptype::boolean},
                             {"archivedOnly", ptype::boolean}},
                            true))
    return *e;
  auto k = key_param(call);
  if (auto* err = std::get_if<frame_error>(&k)) return *err;
  const auto& key = std::get<resolved_key>(k);
  const bool archive = json::get_bool(call.params, "deleteTranscript").value_or(true);
  auto out = call.core.rt->delete_session(key.key, archive);
  if (!out.ok()) return from_status(out.error());
  bj::array archived;
  for (const auto& a : out->archived) archived.emplace_back(bj::string(a));
  if (out->deleted)
    call.core.sink->broadcast(frame_sink::audience::sessions_subscribers, "sessions.changed",
                              bj::object{{"sessionKey", key.key}, {"agentId", key.agent_id}, {"reason", "delete"},
                                         {"ts", call.core.now_ms()}});
  return bj::value(bj::object{{"ok", true}, {"key", key.key}, {"deleted", out->deleted}, {"archived", std::move(archived)}});
}

method_outcome sessions_compact(method_call& call) {
  if (auto e = check_params("sessions.compact", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"maxLines", ptype::positive_integer}},
                            true))
    return *e;
  auto k = key_param(call);
  if (auto* err = std::get_if<frame_error>(&k)) return *err;
  const auto& key = std::get<resolved_key>(k);
  auto before = call.core.rt->session(key.key, key.agent_id);
  if (!before.ok()) return from_status(before.error());
  if (!before->has_value()) return error_of("session not found: " + key.key);
  // What the compaction reports (tokens, first kept entry) comes as its lifecycle event.
  auto done = std::make_shared<std::promise<lifecycle_event>>();
  auto got = done->get_future();
  auto once = std::make_shared<std::once_flag>();
  const auto sub = call.core.rt->subscribe({{"compaction.completed"}, key.key, ""}, [done, once, key = key.key](const lifecycle_event& e) {
    if (e.session_key == key) std::call_once(*once, [&] { done->set_value(e); });
  });
  auto out = run_command(call.core, key, "/compact");
  call.core.rt->unsubscribe(sub);
  if (!out.ok()) return from_status(out.error());
  if (got.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    return bj::value(bj::object{{"ok", true}, {"key", key.key}, {"compacted", false},
                                {"reason", out->command_output.empty() ? std::string("nothing to compact") : out->command_output}});
  const lifecycle_event e = got.get();
  std::string summary;
  if (auto h = call.core.rt->history(key.key); h.ok())
    for (const auto& m : h->messages)
      if (m.is_object() && json::get_string(m.get_object(), "role").value_or("") == "compactionSummary") {
        summary = std::string(json::get_string(m.get_object(), "summary").value_or(""));
        break;
      }
  auto row = call.core.rt->session(key.key, key.agent_id);
  if (row.ok() && row->has_value()) notify_session_changed(call.core, {key.agent_id, key.key, **row}, "compact");
  return bj::value(bj::object{
      {"ok", true},
      {"key", key.key},
      {"compacted", true},
      {"result", bj::object{{"summary", summary},
                            {"firstKeptEntryId", e.data.contains("firstKeptEntryId") ? e.data.at("firstKeptEntryId") : bj::value(nullptr)},
                            {"tokensBefore", e.data.contains("tokensBefore") ? e.data.at("tokensBefore") : bj::value(0)},
                            {"tokensAfter", e.data.contains("tokensAfter") ? e.data.at("tokensAfter") : bj::value(0)},
                            {"details", bj::object{{"readFiles", bj::array{}}, {"modifiedFiles", bj::array{}}}}}}});
}

method_outcome sessions_subscribe(method_call& call) {
  call.conn->sessions_subscribed = true;
  return bj::value(bj::object{{"subscribed", true}});
}

method_outcome sessions_unsubscribe(method_call& call) {
  call.conn->sessions_subscribed = false;
  return bj::value(bj::object{{"subscribed", false}});
}

}  // namespace

void add_session_methods(std::vector<method_entry>& t) {
  t.push_back({"sessions.list", method_scope::read, false, sessions_list});
  t.push_back({"sessions.describe", method_scope::read, false, sessions_describe});
  t.push_back({"sessions.subscribe", method_scope::read, true, sessions_subscribe});
  t.push_back({"sessions.unsubscribe", method_scope::read, true, sessions_unsubscribe});
  t.push_back({"sessions.patch", method_scope::write, false, sessions_patch});
  t.push_back({"sessions.reset", method_scope::admin, false, sessions_reset});
  t.push_back({"sessions.delete", method_scope::admin, false, sessions_delete});
  t.push_back({"sessions.compact", method_scope::admin, false, sessions_compact});
}

}  // namespace sessionrt::gateway
