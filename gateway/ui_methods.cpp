// The methods OpenClaw's web Control UI calls beyond the CLI's and the TUI's (issue #33), in the
// shapes of OpenClaw 2026.9.6's server (dist/*.mjs):
//   chat.startup             chat.history's params and answer, plus metadata {models, commands, ...}
//   chat.metadata            {models, commands, runtimeSelectionLocked}
//   commands.list            {commands}: sessionrt's chat commands (command_catalog.hpp)
//   agent.identity.get       {agentId, name, avatar}: OpenClaw's default identity ("Assistant")
//   sessions.messages.subscribe / unsubscribe   session.message events (session_messages.hpp)
//   sessions.resolve         {ok, key, agentId} by key, sessionId, label or shortId (the hex of
//                            the uuid a dashboard key ends in, as the UI's /chat/<shortId> URLs)
//   sessions.create          a new row (agent:<agent>:dashboard:<uuid> unless `key`); with
//                            `message` its first turn starts as chat.send starts one; with
//                            parentSessionKey + fork it starts from the parent's active branch
//                            (runtime::fork_session, fork_planner.hpp)
// and honest answers for features sessionrt does not have, each what is true here (empty lists,
// nothing configured), listed in docs/PROTOCOL.md: question.list, exec/plugin/openclaw
// approval lists, cron.list / cron.status, tasks.list, progressCard.get, sessions.branches.list,
// sessions.companion.state, sessions.observer.visibility, models.authStatus, talk.catalog,
// update.status, config.get, environments.list, users.list.
#include <openssl/rand.h>

#include <cctype>

#include "actors/router/route_resolver.hpp"
#include "actors/session/hygiene/display_projection.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/command_catalog.hpp"
#include "gateway/method_table.hpp"
#include "gateway/param_check.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_messages.hpp"
#include "gateway/session_notify.hpp"
#include "gateway/session_rows.hpp"
#include "messages/json_access.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {


std::string uuid_v4() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) return {};
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += hex[b[i] >> 4];
    out += hex[b[i] & 15];
  }
  return out;
}

// The other method's handler on this call's connection (its params checks, its answer).
method_outcome call_method(method_call& call, std::string_view name, const bj::object& params) {
  const method_entry* m = find_method(name);
  method_call inner{params, call.core, call.conn_id, call.conn};
  return m->handler(inner);
}

// The chat commands sessionrt answers, in commands.list's entry shape (command_catalog.hpp).
bj::array commands_of(method_call& call) {
  const auto& st = call.core.rt->settings();
  std::vector<std::string> link_ids;
  for (const auto& [name, ids] : st.routing.session.links) link_ids.insert(link_ids.end(), ids.begin(), ids.end());
  return chat_command_catalog(st.session.reset.reset_triggers, link_ids);
}

// OpenClaw's chat metadata: the model catalog and the text commands with their arguments (what
// its commands.list answers for {scope:"text", includeArgs:true}); the UI's command menu adds
// those it does not know to its own.
bj::object metadata_of(method_call& call) {
  bj::object md;
  auto models = call_method(call, "models.list", bj::object{});
  if (auto* v = std::get_if<bj::value>(&models); v && v->is_object())
    if (const auto* list = v->get_object().if_contains("models")) md["models"] = *list;
  md["commands"] = commands_of(call);
  md["runtimeSelectionLocked"] = false;
  return md;
}

std::string lower_hex_of(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '-') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

// The uuid a key ends in (agent:main:dashboard:<uuid>), without dashes, lower case; "" if none.
std::string key_uuid(const std::string& key) {
  const auto colon = key.rfind(':');
  const std::string tail = colon == std::string::npos ? key : key.substr(colon + 1);
  if (tail.size() != 36) return {};
  const std::string hex = lower_hex_of(tail);
  return hex.size() == 32 && hex.find_first_not_of("0123456789abcdef") == std::string::npos ? hex : std::string();
}

// sessions.resolve's lookup: exactly one of key, sessionId, label, shortId (the hex of the uuid a
// key ends in, 8-32 characters, a prefix), within agentId when given. The answer: {ok, key,
// agentId}, {ok:true, ambiguous:true, candidates}, or {ok:false} when missing (allowMissing; an
// error otherwise).
method_outcome resolve_session(method_call& call, const bj::object& p, const char* method) {
  const char* fields[] = {"key", "sessionId", "label", "shortId"};
  int given = 0;
  for (auto f : fields) given += p.contains(f) ? 1 : 0;
  if (given != 1)
    return error_of(given ? "Provide either key, sessionId, label, shortId, or reference (not multiple)"
                          : "Either key, sessionId, label, shortId, or reference is required");
  const std::string agent(json::get_string(p, "agentId").value_or(""));
  const bool allow_missing = json::get_bool(p, "allowMissing").value_or(false);
  if (auto key = json::get_string(p, "key")) {
    auto r = resolve_session_key(*call.core.rt, std::string(*key), agent);
    if (!r.ok()) return from_status(r.error());
    return bj::value(bj::object{{"ok", true}, {"key", r->key}, {"agentId", r->agent_id}});
  }
  std::string short_id;
  if (auto sid = json::get_string(p, "shortId")) {
    short_id = lower_hex_of(*sid);
    if (short_id.size() < 8 || short_id.size() > 32 || short_id.find_first_not_of("0123456789abcdef") != std::string::npos)
      return params_error(method, "shortId must be 8-32 hexadecimal characters");
  }
  auto rows = call.core.rt->sessions();
  if (!rows.ok()) return from_status(rows.error());
  bj::array candidates;
  for (const auto& r : *rows) {
    if (!agent.empty() && r.agent_id != agent) continue;
    bool match = false;
    if (auto v = json::get_string(p, "sessionId")) match = r.entry.session_id().value_or("") == *v;
    else if (auto l = json::get_string(p, "label")) match = r.entry.label().value_or("") == *l;
    else match = key_uuid(r.key).rfind(short_id, 0) == 0 && !key_uuid(r.key).empty();
    if (!match) continue;
    bj::object c{{"key", r.key}, {"agentId", r.agent_id}};
    if (auto l = r.entry.label()) c["displayName"] = std::string(*l);
    candidates.push_back(std::move(c));
  }
  if (candidates.empty()) {
    if (allow_missing) return bj::value(bj::object{{"ok", false}});
    return error_of("No session found");
  }
  if (candidates.size() > 1) {
    if (candidates.size() > 10) candidates.resize(10);
    return bj::value(bj::object{{"ok", true}, {"ambiguous", true}, {"candidates", std::move(candidates)}});
  }
  bj::object one = candidates.front().as_object();
  return bj::value(bj::object{{"ok", true}, {"key", one.at("key")}, {"agentId", one.at("agentId")}});
}

method_outcome sessions_resolve(method_call& call) {
  if (auto e = check_params("sessions.resolve", call.params,
                            {{"key", ptype::nonempty_string}, {"sessionId", ptype::nonempty_string},
                             {"label", ptype::nonempty_string}, {"shortId", ptype::nonempty_string},
                             {"slugHint", ptype::string}, {"agentId", ptype::nonempty_string},
                             {"allowMissing", ptype::boolean}}))
    return *e;
  return resolve_session(call, call.params, "sessions.resolve");
}

// chat.startup: {sessionKey, agentId?, limit?, maxBytes?} answers as chat.history with metadata;
// without a sessionKey the agent's main session is the one opened (OpenClaw's shortId / slugHint
// lookups name sessions sessionrt does not make: resolution {ok:false}).
method_outcome chat_startup(method_call& call) {
  if (auto e = check_params("chat.startup", call.params,
                            {{"sessionKey", ptype::nonempty_string}, {"agentId", ptype::nonempty_string},
                             {"limit", ptype::positive_integer}, {"maxBytes", ptype::positive_integer},
                             {"maxChars", ptype::positive_integer}, {"shortId", ptype::nonempty_string},
                             {"slugHint", ptype::nonempty_string}, {"inputRunIds", ptype::array}}))
    return *e;
  bj::object params = call.params;
  bj::object resolution;
  if (!params.contains("sessionKey") && params.contains("shortId")) {
    bj::object q{{"shortId", params.at("shortId")}, {"allowMissing", true}};
    if (const auto* a = params.if_contains("agentId")) q["agentId"] = *a;
    auto found = resolve_session(call, q, "chat.startup");
    auto* v = std::get_if<bj::value>(&found);
    if (!v) return found;
    const auto& r = v->get_object();
    if (!json::get_bool(r, "ok").value_or(false) || r.contains("ambiguous")) return bj::value(bj::object{{"resolution", r}});
    params["sessionKey"] = r.at("key");
    params["agentId"] = r.at("agentId");
    resolution = r;
  }
  if (!params.contains("sessionKey")) {
    if (params.contains("slugHint")) return bj::value(bj::object{{"resolution", bj::object{{"ok", false}}}});
    const auto& routing = call.core.rt->settings().routing;
    const std::string agent(json::get_string(params, "agentId").value_or(actors::default_agent_of(routing)));
    const std::string key = "agent:" + agent + ":" + routing.session.main_key;
    params["sessionKey"] = key;
    resolution = {{"ok", true}, {"key", key}, {"agentId", agent}};
  }
  params.erase("shortId");
  params.erase("slugHint");
  auto out = call_method(call, "chat.history", params);
  auto* v = std::get_if<bj::value>(&out);
  if (!v || !v->is_object()) return out;
  v->get_object()["metadata"] = metadata_of(call);
  if (!resolution.empty()) v->get_object()["resolution"] = std::move(resolution);
  return out;
}

method_outcome chat_metadata(method_call& call) {
  if (auto e = check_params("chat.metadata", call.params,
                            {{"sessionKey", ptype::nonempty_string}, {"agentId", ptype::nonempty_string},
                             {"authProfileId", ptype::nonempty_string}}))
    return *e;
  return bj::value(metadata_of(call));
}

// commands.list {sessionKey?, agentId?, provider?, scope?, includeArgs?}: {commands}. sessionrt's
// commands are all text commands: scope "native" lists none; includeArgs:false drops `args`.
method_outcome commands_list(method_call& call) {
  if (auto e = check_params("commands.list", call.params,
                            {{"sessionKey", ptype::nonempty_string}, {"agentId", ptype::nonempty_string},
                             {"provider", ptype::nonempty_string}, {"scope", ptype::nonempty_string},
                             {"includeArgs", ptype::boolean}}))
    return *e;
  const std::string scope(json::get_string(call.params, "scope").value_or("both"));
  if (scope != "text" && scope != "native" && scope != "both")
    return params_error("commands.list", "at /scope: must be equal to one of the allowed values (text, native, both)");
  if (auto key = json::get_string(call.params, "sessionKey")) {
    auto r = resolve_session_key(*call.core.rt, std::string(*key), std::string(json::get_string(call.params, "agentId").value_or("")));
    if (!r.ok()) return from_status(r.error());
    auto row = call.core.rt->session(r->key, r->agent_id);
    if (!row.ok()) return from_status(row.error());
    if (!row->has_value()) return error_of("Session not found.");
  }
  bj::array commands;
  if (scope != "native") {
    commands = commands_of(call);
    if (!json::get_bool(call.params, "includeArgs").value_or(true))
      for (auto& c : commands) c.get_object().erase("args");
  }
  return bj::value(bj::object{{"commands", std::move(commands)}});
}

method_outcome agent_identity_get(method_call& call) {
  if (auto e = check_params("agent.identity.get", call.params,
                            {{"agentId", ptype::nonempty_string}, {"sessionKey", ptype::nonempty_string}}))
    return *e;
  const auto& routing = call.core.rt->settings().routing;
  std::string agent(json::get_string(call.params, "agentId").value_or(""));
  if (auto key = json::get_string(call.params, "sessionKey")) {
    auto r = resolve_session_key(*call.core.rt, std::string(*key), agent);
    if (!r.ok()) return from_status(r.error());
    agent = r->agent_id;
  }
  if (agent.empty()) agent = actors::default_agent_of(routing);
  // sessionrt keeps no per-agent identity (IDENTITY.md, ui.assistant): OpenClaw's default one.
  return bj::value(bj::object{{"agentId", agent}, {"name", "Assistant"}, {"avatar", "A"}});
}

method_outcome messages_subscribe(method_call& call) {
  if (auto e = check_params("sessions.messages.subscribe", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string},
                             {"includeApprovals", ptype::boolean}}, true))
    return *e;
  auto key = resolve_session_key(*call.core.rt, std::string(*json::get_string(call.params, "key")),
                                 std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!key.ok()) {
    call.core.metrics->refused(refusal::bad_session_key);
    return from_status(key.error());
  }
  // Where the session stands: its transcript and its newest message (what is there is not pushed).
  session_messages::mark baseline;
  if (auto h = call.core.rt->history(key->key, 1); h.ok()) {
    baseline.session_id = h->session_id;
    if (!h->offsets.empty()) baseline.offset = h->offsets.back();
  }
  call.core.messages->subscribe(call.conn_id, key->key, std::move(baseline));
  bj::object out{{"subscribed", true}, {"key", key->key}};
  // No approvals exist here (exec / plugin approvals are OpenClaw's tools): nothing to replay.
  if (json::get_bool(call.params, "includeApprovals").value_or(false)) out["approvalReplay"] = bj::array{};
  return bj::value(std::move(out));
}

method_outcome messages_unsubscribe(method_call& call) {
  if (auto e = check_params("sessions.messages.unsubscribe", call.params,
                            {{"key", ptype::nonempty_string, true}, {"agentId", ptype::nonempty_string}}, true))
    return *e;
  auto key = resolve_session_key(*call.core.rt, std::string(*json::get_string(call.params, "key")),
                                 std::string(json::get_string(call.params, "agentId").value_or("")));
  if (!key.ok()) return from_status(key.error());
  call.core.messages->unsubscribe(call.conn_id, key->key);
  return bj::value(bj::object{{"subscribed", false}, {"key", key->key}});
}

// sessions.create: SessionsCreateParamsSchema's fields; sessionrt applies key, agentId, label,
// displayName (the title), model, thinkingLevel, message (the first turn) and parentSessionKey +
// fork (+ forkFrom, accepted: the fork is at the parent's leaf); the rest (worktrees, catalogs, projects, permissions) name features it
// does not have and are accepted without effect.
method_outcome sessions_create(method_call& call) {
  if (auto e = check_params("sessions.create", call.params,
                            {{"key", ptype::nonempty_string, false, 512}, {"idempotencyKey", ptype::nonempty_string},
                             {"agentId", ptype::nonempty_string}, {"label", ptype::string, false, 512},
                             {"displayName", ptype::string, false, 512}, {"model", ptype::nonempty_string},
                             {"thinkingLevel", ptype::nonempty_string}, {"parentSessionKey", ptype::nonempty_string},
                             {"fork", ptype::boolean}, {"forkFrom", ptype::nonempty_string}, {"message", ptype::string},
                             {"task", ptype::string},
                             {"timeoutMs", ptype::integer}, {"attachments", ptype::array}}))
    return *e;
  auto& c = call.core;
  const auto& routing = c.rt->settings().routing;
  std::string agent(json::get_string(call.params, "agentId").value_or(""));
  std::string key(json::get_string(call.params, "key").value_or(""));
  if (key.empty()) {
    if (agent.empty()) agent = actors::default_agent_of(routing);
    const std::string id = uuid_v4();
    if (id.empty()) return error_of("cannot draw random bytes for a session key", "UNAVAILABLE");
    key = "agent:" + agent + ":dashboard:" + id;
  }
  auto resolved = resolve_session_key(*c.rt, key, agent);
  if (!resolved.ok()) {
    c.metrics->refused(refusal::bad_session_key);
    return from_status(resolved.error());
  }
  std::string message(json::get_string(call.params, "message").value_or(json::get_string(call.params, "task").value_or("")));
  const auto d = defaults_of(*c.rt, c.default_provider, c.default_model);

  // A fork: the parent's active branch as the new session's start (runtime::fork_session); with
  // a message, its first turn, as without a fork.
  std::optional<runtime::session_row> forked;
  if (json::get_bool(call.params, "fork").value_or(false)) {
    const auto parent_raw = json::get_string(call.params, "parentSessionKey");
    if (!parent_raw) return params_error("sessions.create", "fork requires parentSessionKey");
    if (auto from = json::get_string(call.params, "forkFrom"); from && *from != "last-completed")
      return params_error("sessions.create", "at /forkFrom: must be equal to constant (last-completed)");
    auto parent = resolve_session_key(*c.rt, std::string(*parent_raw), agent);
    if (!parent.ok()) return from_status(parent.error());
    std::optional<std::string> label;
    if (auto l = json::get_string(call.params, "label"); l && !l->empty()) label = std::string(*l);
    auto row = c.rt->fork_session(parent->key, resolved->key, label);
    if (!row.ok()) return from_status(row.error());
    forked = std::move(*row);
  } else if (json::get_string(call.params, "forkFrom")) {
    return params_error("sessions.create", "forkFrom requires fork=true");
  }

  runtime::runtime::session_patch patch;
  if (!forked)
    if (auto l = json::get_string(call.params, "label"); l && !l->empty()) patch.label = std::string(*l);
  // The title (OpenClaw's displayName, not unique). A dashboard session made with its first
  // message and no title is named by that message as shown (the title sessions.list derives),
  // where OpenClaw names it by a model call: the Sessions page shows a dashboard session's
  // displayName, not its derivedTitle.
  if (auto n = json::get_string(call.params, "displayName"); n && !n->empty())
    patch.display_name = std::string(*n);
  else if (!forked && !patch.label && !message.empty() && resolved->key.find(":dashboard:") != std::string::npos)
    if (auto title = actors::hygiene::display_title(bj::object{{"role", "user"}, {"content", message}}))
      patch.display_name = *title;
  if (auto m = json::get_string(call.params, "model")) patch.model = std::string(*m);
  if (auto t = json::get_string(call.params, "thinkingLevel")) patch.thinking_level = std::string(*t);
  const bool patched = !forked || patch.model || patch.thinking_level || patch.display_name;
  auto row = patched ? c.rt->patch_session(resolved->key, patch) : result<runtime::session_row>(std::move(*forked));
  if (!row.ok()) return from_status(row.error());
  notify_session_changed(c, *row, "create");
  bj::object entry = entry_json(*row);
  if (row->entry.forked_from_parent().value_or(false)) entry["forkedFromParent"] = true;
  bj::object out{{"ok", true},
                 {"key", resolved->key},
                 {"sessionId", std::string(row->entry.session_id().value_or(""))},
                 {"entry", std::move(entry)},
                 {"runStarted", false},
                 {"resolved", resolved_json(*row, d)}};
  if (!message.empty()) {
    const std::string run = std::string(json::get_string(call.params, "idempotencyKey").value_or("")).empty()
                                ? uuid_v4() : std::string(*json::get_string(call.params, "idempotencyKey"));
    auto sent = call_method(call, "chat.send",
                            bj::object{{"sessionKey", resolved->key}, {"agentId", resolved->agent_id},
                                       {"message", message}, {"idempotencyKey", run}});
    if (auto* v = std::get_if<bj::value>(&sent); v && v->is_object()) {
      for (const auto& kv : v->get_object()) out[kv.key()] = kv.value();
      out["runStarted"] = json::get_string(v->get_object(), "status").value_or("") == "started";
    } else if (auto* err = std::get_if<frame_error>(&sent)) {
      out["runError"] = bj::object{{"code", err->code}, {"message", err->message}};
    }
  }
  return bj::value(std::move(out));
}

// ---- features sessionrt does not have: what is true here ------------------------------------

method_outcome empty_array(method_call&) { return bj::value(bj::array{}); }

method_outcome question_list(method_call&) { return bj::value(bj::object{{"questions", bj::array{}}}); }

method_outcome cron_list(method_call& call) {
  const auto limit = json::get_int(call.params, "limit").value_or(50);
  return bj::value(bj::object{{"jobs", bj::array{}}, {"total", 0}, {"offset", 0}, {"limit", limit},
                              {"hasMore", false}, {"nextOffset", nullptr}});
}

method_outcome cron_status(method_call&) {
  // sessionrt runs cron jobs a host hands it (system events), but keeps no job store of its own.
  return bj::value(bj::object{{"enabled", false}, {"storePath", nullptr}, {"jobs", 0}, {"nextWakeAtMs", nullptr}});
}

method_outcome tasks_list(method_call&) { return bj::value(bj::object{{"tasks", bj::array{}}}); }
method_outcome progress_card_get(method_call&) { return bj::value(bj::object{{"card", nullptr}}); }
method_outcome branches_list(method_call&) { return bj::value(bj::object{{"branches", bj::array{}}}); }
method_outcome companion_state(method_call&) { return bj::value(bj::object{{"state", "unavailable"}}); }
method_outcome observer_visibility(method_call&) { return bj::value(bj::object{{"ok", true}}); }

method_outcome models_auth_status(method_call& call) {
  // Provider credentials live in sessionrt's config (models.providers.*.apiKey), not in
  // OpenClaw's auth profiles: no profile to report.
  return bj::value(bj::object{{"ts", call.core.now_ms()}, {"providers", bj::array{}}});
}

method_outcome talk_catalog(method_call&) {
  return bj::value(bj::object{{"modes", bj::array{}},
                              {"transports", bj::array{}},
                              {"brains", bj::array{}},
                              {"speech", bj::object{{"providers", bj::array{}}}},
                              {"transcription", bj::object{{"providers", bj::array{}}}},
                              {"realtime", bj::object{{"providers", bj::array{}}}}});
}

method_outcome update_status(method_call&) {
  // sessionrt is not updated by its gateway (no update runs, no channel).
  return bj::value(bj::object{{"sentinel", nullptr}, {"updateAvailable", nullptr}});
}

// No user profiles: the gateway knows one operator, by its token (the Sessions page's session
// menu lists profiles to assign a session to).
method_outcome users_list(method_call&) { return bj::value(bj::object{{"profiles", bj::array{}}}); }

// No execution environments (sandboxes, remote machines): turns run in the gateway's process.
method_outcome environments_list(method_call&) { return bj::value(bj::object{{"environments", bj::array{}}}); }

method_outcome config_get(method_call&) {
  // There is no OpenClaw config (openclaw.json) here; sessionrt's own config is its command's
  // --config file, which this method does not show or change.
  return bj::value(bj::object{{"path", nullptr}, {"exists", false}, {"raw", nullptr}, {"parsed", bj::object{}},
                              {"valid", true}, {"config", bj::object{}}, {"hash", nullptr},
                              {"issues", bj::array{}}, {"warnings", bj::array{}}, {"legacyIssues", bj::array{}}});
}

}  // namespace

void add_ui_methods(std::vector<method_entry>& t) {
  t.push_back({"chat.startup", method_scope::read, false, chat_startup});
  t.push_back({"chat.metadata", method_scope::read, false, chat_metadata});
  t.push_back({"agent.identity.get", method_scope::read, false, agent_identity_get});
  t.push_back({"commands.list", method_scope::read, false, commands_list});
  t.push_back({"sessions.messages.subscribe", method_scope::read, false, messages_subscribe});
  t.push_back({"sessions.messages.unsubscribe", method_scope::read, false, messages_unsubscribe});
  t.push_back({"sessions.create", method_scope::write, false, sessions_create});
  t.push_back({"sessions.resolve", method_scope::read, false, sessions_resolve});
  // Features sessionrt does not have (docs/PROTOCOL.md, "Honest answers").
  t.push_back({"question.list", method_scope::read, true, question_list});
  t.push_back({"exec.approval.list", method_scope::read, true, empty_array});
  t.push_back({"plugin.approval.list", method_scope::read, true, empty_array});
  t.push_back({"openclaw.approval.list", method_scope::read, true, empty_array});
  t.push_back({"cron.list", method_scope::read, true, cron_list});
  t.push_back({"cron.status", method_scope::read, true, cron_status});
  t.push_back({"tasks.list", method_scope::read, true, tasks_list});
  t.push_back({"progressCard.get", method_scope::read, true, progress_card_get});
  t.push_back({"sessions.branches.list", method_scope::read, true, branches_list});
  t.push_back({"sessions.companion.state", method_scope::read, true, companion_state});
  t.push_back({"sessions.observer.visibility", method_scope::read, true, observer_visibility});
  t.push_back({"models.authStatus", method_scope::read, true, models_auth_status});
  t.push_back({"talk.catalog", method_scope::read, true, talk_catalog});
  t.push_back({"update.status", method_scope::read, true, update_status});
  t.push_back({"config.get", method_scope::read, true, config_get});
  t.push_back({"environments.list", method_scope::read, true, environments_list});
  t.push_back({"users.list", method_scope::read, true, users_list});
}

}  // namespace sessionrt::gateway
