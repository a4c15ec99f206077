// Expectations from [R§4.3] (decision, carry-over, cleared fields, usage family, system
// events), [R§2.2] (the minimal row and its key order), [R§4.4] and [R§5.6] (cron).
#include <catch2/catch.hpp>
#include <date/tz.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "actors/session/reset_policy.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t minute = 60'000;
constexpr std::int64_t hour = 60 * minute;
constexpr const char* key = "agent:main:telegram:direct:123456";

session_entry row(const char* json_text) {
  auto o = json::parse_object(json_text);
  REQUIRE(o.ok());
  return session_entry(std::move(*o));
}

std::vector<std::string> keys_of(const session_entry& e) {
  std::vector<std::string> out;
  for (const auto& kv : e.json()) out.emplace_back(kv.key());
  return out;
}

std::string path_for(std::string_view id) { return "/home/u/.sessionrt/agents/main/sessions/" + std::string(id) + ".jsonl"; }

rollover_input turn(const session_entry* current, std::int64_t now, const char* new_id = "new-id") {
  rollover_input in;
  in.current = current;
  in.session_key = key;
  in.now_ms = now;
  in.new_session_id = new_id;
  in.transcript_path = path_for;
  return in;
}

session_freshness stale(session_end_reason why) {
  session_freshness f;
  f.fresh = false;
  f.stale_reason = why;
  return f;
}

reset_trigger_result trigger(const char* body) { return parse_reset_trigger(body, reset_trigger_options{}); }

// A row that has been through a day of use: preferences, overrides, lineage, counters, caches.
const char* used_row = R"({
  "sessionId": "old-id",
  "updatedAt": 1000,
  "thinkingLevel": "high",
  "sessionStartedAt": 500,
  "lastInteractionAt": 900,
  "systemSent": true,
  "abortedLastRun": true,
  "verboseLevel": "on",
  "traceLevel": "off",
  "reasoningLevel": "stream",
  "ttsAuto": "always",
  "responseUsage": "tokens",
  "label": "My chat",
  "displayName": "Alice",
  "providerOverride": "openai",
  "modelOverride": "gpt-4o",
  "modelOverrideSource": "user",
  "authProfileOverride": "openai:work",
  "authProfileOverrideSource": "user",
  "spawnedBy": "agent:main:main",
  "spawnedWorkspaceDir": "/w",
  "spawnedCwd": "/w/sub",
  "parentSessionKey": "agent:main:main",
  "forkedFromParent": true,
  "spawnDepth": 1,
  "subagentRole": "leaf",
  "subagentControlScope": "none",
  "sendPolicy": "deny",
  "queueMode": "collect",
  "groupActivation": "always",
  "chatType": "direct",
  "deliveryContext": {"channel": "telegram", "to": "telegram:123456"},
  "lastChannel": "telegram",
  "lastTo": "telegram:123456",
  "origin": {"provider": "telegram"},
  "cliSessionIds": {"claude-cli": "abc"},
  "sessionFile": "/home/u/.sessionrt/agents/main/sessions/old-id.jsonl",
  "compactionCount": 3,
  "memoryFlushAt": 800,
  "memoryFlushCompactionCount": 2,
  "memoryFlushFailureCount": 1,
  "memoryFlushContextHash": "h",
  "modelProvider": "openai",
  "model": "gpt-4o",
  "fallbackNoticeSelectedModel": "a/b",
  "fallbackNoticeActiveModel": "c/d",
  "fallbackNoticeReason": "rate limit",
  "systemPromptReport": {"chars": 10},
  "startedAt": 1, "endedAt": 2, "runtimeMs": 3, "status": "done",
  "inputTokens": 10, "outputTokens": 20, "estimatedCostUsd": 0.5, "cacheRead": 5, "cacheWrite": 6,
  "totalTokens": 35, "totalTokensFresh": false,
  "contextTokens": 200000,
  "contextBudgetStatus": {"schemaVersion": 1},
  "goal": {"schemaVersion": 1},
  "skillsSnapshot": {"skills": []}
})";

// The algorithm roll_session had before it was made cheap (a copy of the row, ~80 slots found by
// linear search, each applied with json::set / json::erase), kept verbatim as the reference the
// fast one must match byte for byte.
namespace reference {

using field_list = std::initializer_list<std::string_view>;

const field_list preference_fields = {"thinkingLevel", "verboseLevel", "traceLevel",
                                          "reasoningLevel", "ttsAuto",      "responseUsage"};
const field_list cli_binding_fields = {"cliSessionIds", "cliSessionBindings", "claudeCliSessionId"};
const field_list lineage_fields = {"spawnedBy",        "spawnedWorkspaceDir", "spawnedCwd",
                                       "parentSessionKey", "forkedFromParent",    "spawnDepth",
                                       "subagentRole",     "subagentControlScope"};
const field_list send_queue_fields = {"sendPolicy", "queueMode", "queueDebounceMs", "queueCap", "queueDrop"};
const field_list group_fields = {"chatType", "channel", "groupId", "subject", "groupChannel", "space"};
const field_list group_activation_fields = {"groupActivation", "groupActivationNeedsSystemIntro"};
const field_list route_fields = {"route",  "deliveryContext", "lastChannel",
                                     "lastTo", "lastAccountId",   "lastThreadId"};
const field_list model_override_fields = {"providerOverride", "modelOverride", "modelOverrideSource",
                                              "modelOverrideFallbackOriginProvider",
                                              "modelOverrideFallbackOriginModel"};
const field_list fallback_origin_fields = {"modelOverrideFallbackOriginProvider",
                                               "modelOverrideFallbackOriginModel"};
const field_list auth_override_fields = {"authProfileOverride", "authProfileOverrideSource",
                                             "authProfileOverrideCompactionCount"};
const field_list memory_flush_fields = {"memoryFlushAt",           "memoryFlushCompactionCount",
                                            "memoryFlushContextHash",  "memoryFlushFailureCount",
                                            "memoryFlushLastFailedAt", "memoryFlushLastFailureError"};
const field_list run_stat_fields = {"startedAt", "endedAt", "runtimeMs", "status"};
const field_list run_cache_fields = {"inputTokens",          "outputTokens",
                                         "estimatedCostUsd",     "cacheRead",
                                         "cacheWrite",           "contextTokens",
                                         "contextBudgetStatus",  "goal",
                                         "skillsSnapshot",       "modelProvider",
                                         "model",                "fallbackNoticeSelectedModel",
                                         "fallbackNoticeActiveModel", "fallbackNoticeReason",
                                         "systemPromptReport"};
// The object literal initSessionState spreads over the row: an ordered list of keys, each
// with a value or JavaScript's undefined (delete). The first write of a key fixes its place.
class row_patch {
 public:
  // Reusing the session: the patch lands on the row it carries from, so `key: row.key` is a
  // no-op and carry() is skipped (the hot path: most turns reuse their session); get() then
  // answers from the row for keys the patch does not set.
  explicit row_patch(const boost::json::object* reused_row = nullptr) : reused_(reused_row) {}
  void set(std::string_view key, boost::json::value v) { slot(key) = std::move(v); }
  void unset(std::string_view key) { slot(key).reset(); }
  void unset(field_list keys) {
    for (auto k : keys) unset(k);
  }
  // `key: from.key` (undefined when absent).
  void carry(const boost::json::object& from, std::string_view key) {
    // Reusing the row: a key it has is already in place; an absent one still takes its slot
    // here, as {...entry, ...patch} orders it.
    if (reused_ == &from && from.contains(key)) return;
    if (const auto* v = from.if_contains(key))
      set(key, *v);
    else
      unset(key);
  }
  void carry(const boost::json::object& from, field_list keys) {
    for (auto k : keys) carry(from, k);
  }
  const boost::json::value* get(std::string_view key) const {
    for (const auto& [k, v] : items_)
      if (k == key) return v ? &*v : nullptr;
    return reused_ ? reused_->if_contains(key) : nullptr;
  }
  // {...row, ...patch}; undefined members are deleted (JSON.stringify omits them).
  void apply_to(boost::json::object& row) const {
    for (const auto& [k, v] : items_) {
      if (v)
        json::set(row, k, *v);
      else
        json::erase(row, k);
    }
  }

 private:
  std::optional<boost::json::value>& slot(std::string_view key) {
    for (auto& [k, v] : items_)
      if (k == key) return v;
    items_.emplace_back(std::string(key), std::nullopt);
    return items_.back().second;
  }
  std::vector<std::pair<std::string, std::optional<boost::json::value>>> items_;
  const boost::json::object* reused_ = nullptr;
};

bool js_truthy(const boost::json::value* v) {
  if (!v || v->is_null()) return false;
  if (v->is_string()) return !v->get_string().empty();
  if (v->is_bool()) return v->get_bool();
  if (auto n = json::as_number(*v)) return *n != 0 && !std::isnan(*n);
  return true;
}

// null or undefined, the values `??` replaces.
bool nullish(const boost::json::value* v) { return !v || v->is_null(); }

boost::json::value timestamp_value(double t) {
  if (std::trunc(t) == t && std::fabs(t) < 9e15) return static_cast<std::int64_t>(t);
  return t;
}

bool can_reuse(const session_entry* row) {
  if (!row) return false;
  auto id = row->session_id();
  auto updated = json::get_number(row->json(), "updatedAt");
  return id && !id->empty() && updated && std::isfinite(*updated);
}

struct turn_decision {
  bool reuse = false;
  bool ends_previous = false;  // previousSessionEntry: archived, its queued events dropped
  bool explicit_reset = false;
  std::optional<session_end_reason> reason;
};

turn_decision decide(const rollover_input& in) {
  const bool reusable = can_reuse(in.current);
  const bool explicit_reset = in.trigger.command == reset_command::reset;
  const bool reset = explicit_reset || in.force_new;
  const bool soft = in.trigger.command == reset_command::soft_reset;
  const bool fresh = (is_system_event(in.kind) && reusable) || (in.reconnect_resume && reusable) ||
                     (in.current && in.freshness.fresh) || (soft && reusable);
  turn_decision d;
  d.explicit_reset = explicit_reset;
  d.reuse = !reset && fresh && reusable;
  d.ends_previous = !d.reuse && (reset || !fresh) && in.current;
  if (!d.ends_previous) return d;
  if (explicit_reset)
    d.reason = in.trigger.explicit_reason();
  else if (in.force_new)
    d.reason = session_end_reason::new_session;
  else
    d.reason = in.freshness.stale_reason;
  return d;
}

// `isNewSession ? now : (baseEntry.sessionStartedAt ?? <transcript header time>)`
void put_started_at(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& base) {
  const boost::json::value* stored = base.if_contains("sessionStartedAt");
  if (!d.reuse)
    p.set("sessionStartedAt", in.now_ms);
  else if (!nullish(stored))
    p.set("sessionStartedAt", *stored);
  else if (in.recovered_started_at)
    p.set("sessionStartedAt", timestamp_value(*in.recovered_started_at));
  else
    p.unset("sessionStartedAt");
}

void put_lifecycle(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& base) {
  if (d.reuse)
    p.carry(base, "sessionId");
  else
    p.set("sessionId", boost::json::string(in.new_session_id));
  p.set("updatedAt", in.now_ms);
  put_started_at(p, in, d, base);
  if (is_system_event(in.kind))
    p.carry(base, "lastInteractionAt");  // system events do not extend idle life
  else
    p.set("lastInteractionAt", in.now_ms);
  for (auto key : {"systemSent", "abortedLastRun"}) {
    const auto* v = d.reuse ? base.if_contains(key) : nullptr;
    p.set(key, nullish(v) ? boost::json::value(false) : *v);  // `entry.key ?? false`
  }
}

void put_usage_family(row_patch& p, const rollover_input& in, const turn_decision& d,
                      const boost::json::object& base) {
  if (!d.ends_previous) {
    p.carry(base, {"usageFamilyKey", "usageFamilySessionIds"});
    return;
  }
  const session_entry& previous = *in.current;
  auto key = previous.usage_family_key();
  p.set("usageFamilyKey", boost::json::string(key ? *key : std::string_view(in.session_key)));
  std::vector<std::string> ids = previous.usage_family_session_ids();
  if (auto id = previous.session_id(); id && !id->empty()) ids.emplace_back(*id);
  ids.emplace_back(in.new_session_id);
  std::vector<std::string> unique;
  for (auto& id : ids)
    if (std::find(unique.begin(), unique.end(), id) == unique.end()) unique.push_back(std::move(id));
  boost::json::array a;
  for (const auto& id : unique) a.emplace_back(id);
  p.set("usageFamilySessionIds", std::move(a));
}

void put_selection(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  if (d.reuse) {
    p.carry(old, {"modelOverride", "providerOverride", "modelOverrideSource"});
    p.carry(old, auth_override_fields);
    return;
  }
  if (in.current && keeps_model_override_on_reset(*in.current)) {
    p.carry(old, {"modelOverride", "providerOverride"});
    p.set("modelOverrideSource", "user");
    p.unset(fallback_origin_fields);
  } else {
    p.unset(model_override_fields);
  }
  if (in.current && keeps_auth_profile_override_on_reset(*in.current)) {
    p.carry(old, "authProfileOverride");
    p.set("authProfileOverrideSource", "user");
    p.carry(old, "authProfileOverrideCompactionCount");
  } else {
    p.unset(auth_override_fields);
  }
}

// `key: d.reuse ? row.key : undefined`
void carry_if_reused(row_patch& p, const turn_decision& d, const boost::json::object& old, field_list keys) {
  if (d.reuse)
    p.carry(old, keys);
  else
    p.unset(keys);
}

void put_session_file(row_patch& p, const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  if (d.reuse && old.contains("sessionFile")) return;
  if (!in.transcript_path) return;
  std::string_view id = d.reuse ? std::string_view(old.at("sessionId").get_string()) : in.new_session_id;
  p.set("sessionFile", boost::json::string(in.transcript_path(id)));
}

void put_new_session_counters(row_patch& p) {
  p.set("compactionCount", 0);
  p.unset(memory_flush_fields);
  p.unset(run_stat_fields);
  p.set("totalTokens", 0);
  p.set("totalTokensFresh", true);
  p.unset(run_cache_fields);
}

row_patch build_patch(const rollover_input& in, const turn_decision& d, const boost::json::object& old) {
  static const boost::json::object nothing;
  const boost::json::object& base = d.reuse ? old : nothing;  // OpenClaw's baseEntry
  row_patch p(d.reuse ? &old : nullptr);
  put_lifecycle(p, in, d, base);
  p.carry(old, preference_fields);
  put_usage_family(p, in, d, base);
  put_selection(p, in, d, old);
  carry_if_reused(p, d, old, cli_binding_fields);
  p.carry(old, "label");
  if (d.reuse || d.explicit_reset)
    p.carry(old, lineage_fields);
  else
    p.unset(lineage_fields);
  carry_if_reused(p, d, old, send_queue_fields);
  p.carry(old, "displayName");
  carry_if_reused(p, d, old, group_fields);
  p.carry(old, group_activation_fields);
  carry_if_reused(p, d, old, route_fields);
  for (const auto& [k, v] : in.inbound_patch) p.set(k, v);
  if (!js_truthy(p.get("chatType"))) p.set("chatType", "direct");
  put_session_file(p, in, d, old);
  if (!d.reuse) put_new_session_counters(p);
  return p;
}

rollover_result roll_session(const rollover_input& in) {
  const turn_decision d = decide(in);
  static const boost::json::object none;
  const boost::json::object& old = in.current ? in.current->json() : none;
  boost::json::object row = old;
  build_patch(in, d, old).apply_to(row);

  rollover_result r;
  r.new_session = !d.reuse;
  r.reason = d.reason;
  r.entry = session_entry(std::move(row));
  if (d.ends_previous) {
    r.drop_queued_system_events = true;
    if (auto id = in.current->session_id(); id && !id->empty()) r.archive_session_id = std::string(*id);
  }
  return r;
}

}  // namespace reference

// Varied rows and turns for the reference comparison: a fixed seed, the engine's raw output only
// (std::mt19937_64's sequence is fixed by the standard; distributions are not).
class case_maker {
 public:
  explicit case_maker(std::uint64_t seed) : rng_(seed) {}
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
  template <class T, std::size_t N>
  const T& pick(const T (&items)[N]) { return items[below(N)]; }

  // Every key roll_session writes by name, and a few it never names.
  static constexpr const char* keys[] = {
      "sessionId", "updatedAt", "sessionStartedAt", "lastInteractionAt", "systemSent", "abortedLastRun",
      "thinkingLevel", "verboseLevel", "traceLevel", "reasoningLevel", "ttsAuto", "responseUsage",
      "usageFamilyKey", "usageFamilySessionIds", "providerOverride", "modelOverride", "modelOverrideSource",
      "modelOverrideFallbackOriginProvider", "modelOverrideFallbackOriginModel", "authProfileOverride",
      "authProfileOverrideSource", "authProfileOverrideCompactionCount", "cliSessionIds", "cliSessionBindings",
      "claudeCliSessionId", "label", "spawnedBy", "spawnedWorkspaceDir", "spawnedCwd", "parentSessionKey",
      "forkedFromParent", "spawnDepth", "subagentRole", "subagentControlScope", "sendPolicy", "queueMode",
      "queueDebounceMs", "queueCap", "queueDrop", "displayName", "chatType", "channel", "groupId", "subject",
      "groupChannel", "space", "groupActivation", "groupActivationNeedsSystemIntro", "route", "deliveryContext",
      "lastChannel", "lastTo", "lastAccountId", "lastThreadId", "sessionFile", "compactionCount", "totalTokens",
      "totalTokensFresh", "memoryFlushAt", "memoryFlushCompactionCount", "memoryFlushContextHash",
      "memoryFlushFailureCount", "memoryFlushLastFailedAt", "memoryFlushLastFailureError", "startedAt",
      "endedAt", "runtimeMs", "status", "inputTokens", "outputTokens", "estimatedCostUsd", "cacheRead",
      "cacheWrite", "contextTokens", "contextBudgetStatus", "goal", "skillsSnapshot", "modelProvider", "model",
      "fallbackNoticeSelectedModel", "fallbackNoticeActiveModel", "fallbackNoticeReason", "systemPromptReport",
      "origin", "acp", "elevatedLevel", "pendingFinalDelivery", "customNote", "x-extra", "brandNew"};

  boost::json::value any_value() {
    switch (below(16)) {
      case 0: return nullptr;
      case 1: return "";
      case 2: return "text";
      case 3: return "user";
      case 4: return "auto";
      case 5: return 0;
      case 6: return 1;
      case 7: return 1.5;
      case 8: return -0.0;
      case 9: return true;
      case 10: return false;
      case 11: return boost::json::object{{"a", 1}, {"b", "x"}};
      case 12: return boost::json::object{{"b", "x"}, {"a", 1}};  // equal to 11 but for the key order
      case 13: return boost::json::array{"s0", "s1"};
      case 14: return std::uint64_t{1};
      default: return "telegram:123456";
    }
  }

  // A row: some keys in a shuffled order, often a reusable session.
  session_entry row() {
    std::vector<const char*> order(std::begin(keys), std::end(keys));
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[below(i)]);
    order.resize(below(36));
    boost::json::object o;
    if (chance(80)) o["sessionId"] = chance(90) ? "old-id" : "";
    if (chance(85)) o["updatedAt"] = chance(90) ? boost::json::value(1000) : boost::json::value("yesterday");
    for (const char* k : order) o[k] = any_value();
    if (chance(40)) o["modelOverride"] = "gpt-4o";
    if (chance(40)) o["authProfileOverride"] = "openai:work";
    if (chance(30)) o["usageFamilySessionIds"] = boost::json::array{"old-id", "older"};
    return session_entry(std::move(o));
  }

  // An inbound patch: route keys, keys the row has (equal, reordered or new values) and keys it lacks.
  boost::json::object inbound(const session_entry* current) {
    boost::json::object p;
    const std::size_t n = below(9);
    for (std::size_t i = 0; i < n; ++i) {
      const char* k = chance(50) ? pick(route_like) : pick(keys);
      const boost::json::value* has = current ? current->json().if_contains(k) : nullptr;
      if (has && chance(50))
        p[k] = *has;  // the same value: nothing to change
      else
        p[k] = any_value();
    }
    return p;
  }

  rollover_input turn(const session_entry* current) {
    rollover_input in;
    in.current = current;
    in.session_key = "agent:main:telegram:direct:123456";
    in.kind = pick(kinds);
    in.now_ms = 5000 + static_cast<std::int64_t>(below(1000));
    in.new_session_id = "new-id";
    if (chance(85)) in.transcript_path = [](std::string_view id) { return "/s/" + std::string(id) + ".jsonl"; };
    if (chance(25)) {
      in.freshness.fresh = false;
      in.freshness.stale_reason = chance(50) ? session_end_reason::daily : session_end_reason::idle;
    }
    if (!is_system_event(in.kind)) in.trigger = parse_reset_trigger(pick(bodies), reset_trigger_options{});
    if (chance(20)) in.recovered_started_at = chance(50) ? 400.0 : 400.5;
    in.reconnect_resume = chance(10);
    in.force_new = chance(10);
    if (!is_system_event(in.kind) || chance(20)) in.inbound_patch = inbound(current);
    return in;
  }

 private:
  static constexpr const char* route_like[] = {"route",    "deliveryContext", "lastChannel", "lastTo",
                                               "lastAccountId", "lastThreadId", "origin", "chatType",
                                               "channel",  "groupId",         "subject"};
  static constexpr inbound_kind kinds[] = {inbound_kind::message, inbound_kind::message, inbound_kind::message,
                                           inbound_kind::heartbeat, inbound_kind::cron_event,
                                           inbound_kind::exec_event};
  static constexpr const char* bodies[] = {"hi", "hi", "/new", "/reset", "/reset soft", "/new plan my week"};
  std::mt19937_64 rng_;
};

std::string describe(const rollover_result& r) {
  std::string out = r.new_session ? "new" : "reuse";
  out += " reason=" + (r.reason ? std::string(session_end_reason_name(*r.reason)) : std::string("-"));
  out += " archive=" + r.archive_session_id.value_or("-");
  out += r.drop_queued_system_events ? " drop" : " keep";
  return out + " " + json::to_compact(r.entry.json());
}

}  // namespace

TEST_CASE("first message on a key builds the minimal row in initSessionState's key order [R§2.2]") {
  const std::int64_t now = 1767225600000;
  auto in = turn(nullptr, now, "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44");
  in.trigger = trigger("hello");
  auto patch = json::parse_object(R"({
    "origin": {"provider": "telegram", "surface": "telegram", "chatType": "direct"},
    "lastAccountId": "default",
    "deliveryContext": {"channel": "telegram", "to": "telegram:123456", "accountId": "default"},
    "lastChannel": "telegram",
    "lastTo": "telegram:123456"
  })");
  REQUIRE(patch.ok());
  in.inbound_patch = *patch;
  auto r = roll_session(in);
  CHECK(r.new_session);
  CHECK_FALSE(r.reason);  // nothing ended
  CHECK_FALSE(r.archive_session_id);
  CHECK_FALSE(r.drop_queued_system_events);
  const std::vector<std::string> expected = {
      "sessionId",     "updatedAt", "sessionStartedAt", "lastInteractionAt", "systemSent", "abortedLastRun",
      "chatType",      "deliveryContext", "lastChannel", "lastTo",           "lastAccountId", "origin",
      "sessionFile",   "compactionCount", "totalTokens", "totalTokensFresh"};
  CHECK(keys_of(r.entry) == expected);
  CHECK(r.entry.session_id() == "3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44");
  CHECK(r.entry.updated_at() == now);
  CHECK(r.entry.session_started_at() == now);
  CHECK(r.entry.last_interaction_at() == now);
  CHECK(r.entry.chat_type() == "direct");
  CHECK(r.entry.session_file() == path_for("3f0c1d7e-5a0b-4a51-9d7c-2b8f6e1a9c44"));
  CHECK(r.entry.compaction_count() == 0);
  CHECK(r.entry.total_tokens() == 0);
  CHECK(r.entry.total_tokens_fresh() == true);
  CHECK_FALSE(r.entry.has("usageFamilyKey"));  // set on the first rollover only
}

TEST_CASE("a fresh row is reused: same id, timestamps moved, nothing else touched [R§4.3]") {
  const auto old = row(used_row);
  auto in = turn(&old, 5000);
  in.trigger = trigger("hi");
  auto r = roll_session(in);
  CHECK_FALSE(r.new_session);
  CHECK_FALSE(r.reason);
  CHECK_FALSE(r.archive_session_id);
  CHECK_FALSE(r.drop_queued_system_events);
  CHECK(keys_of(r.entry) == keys_of(old));  // no key added, removed or moved
  CHECK(r.entry.session_id() == "old-id");
  CHECK(r.entry.updated_at() == 5000);
  CHECK(r.entry.last_interaction_at() == 5000);
  CHECK(r.entry.session_started_at() == 500);
  CHECK(r.entry.compaction_count() == 3);
  CHECK(r.entry.total_tokens() == 35);
  CHECK(json::get_bool(r.entry.json(), "systemSent") == true);
  CHECK(r.entry.session_file() == "/home/u/.sessionrt/agents/main/sessions/old-id.jsonl");
  CHECK(r.entry.model() == "gpt-4o");
}

TEST_CASE("a reused row gets sessionStartedAt from the transcript header, systemSent defaults [R§4.2, R§4.3]") {
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100})");
  auto in = turn(&old, 200);
  in.recovered_started_at = 50;
  auto r = roll_session(in);
  CHECK_FALSE(r.new_session);
  CHECK(r.entry.session_started_at() == 50);
  CHECK(json::get_bool(r.entry.json(), "systemSent") == false);
  CHECK(json::get_bool(r.entry.json(), "abortedLastRun") == false);
  CHECK(r.entry.chat_type() == "direct");
  CHECK(r.entry.session_file() == path_for("s1"));  // a row without sessionFile gets one
}

TEST_CASE("/new: preferences, user overrides and lineage carry over, counters and caches clear [R§4.3]") {
  const auto old = row(used_row);
  auto in = turn(&old, 5000);
  in.trigger = trigger("/new");
  auto r = roll_session(in);
  REQUIRE(r.new_session);
  CHECK(r.reason == session_end_reason::new_session);
  CHECK(r.archive_session_id == "old-id");
  CHECK(r.drop_queued_system_events);
  const auto& e = r.entry;
  CHECK(e.session_id() == "new-id");
  CHECK(e.updated_at() == 5000);
  CHECK(e.session_started_at() == 5000);
  CHECK(e.last_interaction_at() == 5000);
  CHECK(json::get_bool(e.json(), "systemSent") == false);
  CHECK(json::get_bool(e.json(), "abortedLastRun") == false);
  CHECK(e.session_file() == path_for("new-id"));

  const char* carried[] = {"thinkingLevel", "verboseLevel", "traceLevel", "reasoningLevel", "ttsAuto", "responseUsage",
                           "label", "displayName", "groupActivation", "providerOverride", "modelOverride",
                           "modelOverrideSource", "authProfileOverride", "authProfileOverrideSource",
                           // explicit /new|/reset: lineage too
                           "spawnedBy", "spawnedWorkspaceDir", "spawnedCwd", "parentSessionKey", "forkedFromParent",
                           "spawnDepth", "subagentRole", "subagentControlScope"};
  for (const char* k : carried) {
    INFO(k);
    REQUIRE(e.has(k));
    CHECK(e.json().at(k) == old.json().at(k));
  }
  const char* cleared[] = {"memoryFlushAt", "memoryFlushCompactionCount", "memoryFlushFailureCount",
                           "memoryFlushContextHash", "modelProvider", "model", "fallbackNoticeSelectedModel",
                           "fallbackNoticeActiveModel", "fallbackNoticeReason", "systemPromptReport", "startedAt",
                           "endedAt", "runtimeMs", "status", "inputTokens", "outputTokens", "estimatedCostUsd",
                           "cacheRead", "cacheWrite", "contextTokens", "contextBudgetStatus", "goal",
                           "skillsSnapshot", "cliSessionIds", "sendPolicy", "queueMode",
                           // inbound-derived: the caller's inbound_patch supplies them for the new turn
                           "deliveryContext", "lastChannel", "lastTo"};
  for (const char* k : cleared) {
    INFO(k);
    CHECK_FALSE(e.has(k));
  }
  CHECK(e.compaction_count() == 0);
  CHECK(e.total_tokens() == 0);
  CHECK(e.total_tokens_fresh() == true);
  CHECK(e.chat_type() == "direct");
  CHECK(e.has("origin"));  // merged, not rebuilt (deriveSessionMetaPatch updates it)

  // Keys keep their place ({...row, ...patch}); only new keys are appended.
  auto k = keys_of(e);
  CHECK(k[0] == "sessionId");
  CHECK(k[1] == "updatedAt");
  CHECK(k[2] == "thinkingLevel");
  CHECK(k[3] == "sessionStartedAt");
  CHECK(k.back() == "usageFamilySessionIds");
  CHECK(k[k.size() - 2] == "usageFamilyKey");
}

TEST_CASE("/reset ends with reason reset, inbound_patch lands in the row's positions [R§4.3]") {
  const auto old = row(used_row);
  auto in = turn(&old, 5000);
  in.trigger = trigger("/reset what changed?");
  in.inbound_patch["chatType"] = "direct";
  in.inbound_patch["lastTo"] = "telegram:999";
  auto r = roll_session(in);
  CHECK(r.reason == session_end_reason::reset);
  CHECK(in.trigger.first_message == "what changed?");
  CHECK(r.entry.last_to() == "telegram:999");
  CHECK(r.entry.chat_type() == "direct");
  // Keys that were in the old row (chatType and lastTo included) keep their relative order.
  std::vector<std::string> surviving;
  for (const auto& k : keys_of(old))
    if (r.entry.has(k)) surviving.push_back(k);
  auto now_keys = keys_of(r.entry);
  now_keys.resize(surviving.size());  // the appended keys come last
  CHECK(now_keys == surviving);
  CHECK(std::find(surviving.begin(), surviving.end(), "lastTo") != surviving.end());
}

TEST_CASE("daily and idle rollovers carry preferences but not the lineage [R§4.3]") {
  const auto old = row(used_row);
  for (auto why : {session_end_reason::daily, session_end_reason::idle}) {
    auto in = turn(&old, 5000);
    in.freshness = stale(why);
    auto r = roll_session(in);
    REQUIRE(r.new_session);
    CHECK(r.reason == why);
    CHECK(r.archive_session_id == "old-id");
    CHECK(r.drop_queued_system_events);
    CHECK(r.entry.thinking_level() == "high");
    CHECK(r.entry.label() == "My chat");
    CHECK(r.entry.model_override() == "gpt-4o");
    for (const char* k : {"spawnedBy", "spawnedWorkspaceDir", "spawnedCwd", "parentSessionKey", "forkedFromParent",
                          "spawnDepth", "subagentRole", "subagentControlScope"}) {
      INFO(k);
      CHECK_FALSE(r.entry.has(k));
    }
  }
}

TEST_CASE("only user-chosen model and auth overrides survive a reset (resolveResetPreservedSelection) [R§4.3]") {
  struct row_case {
    const char* what;
    const char* json;
    bool keeps_model;
    bool keeps_auth;
  };
  const row_case table[] = {
      {"source user", R"({"sessionId":"a","updatedAt":1,"modelOverride":"m","providerOverride":"p",
         "modelOverrideSource":"user","authProfileOverride":"x","authProfileOverrideSource":"user"})",
       true, true},
      {"source auto", R"({"sessionId":"a","updatedAt":1,"modelOverride":"m","providerOverride":"p",
         "modelOverrideSource":"auto","authProfileOverride":"x","authProfileOverrideSource":"auto"})",
       false, false},
      {"legacy, no provenance", R"({"sessionId":"a","updatedAt":1,"modelOverride":"m","providerOverride":"p",
         "authProfileOverride":"x"})",
       true, true},
      {"legacy, auto-fallback provenance", R"({"sessionId":"a","updatedAt":1,"modelOverride":"m",
         "modelOverrideFallbackOriginProvider":"p0","modelOverrideFallbackOriginModel":"m0",
         "authProfileOverride":"x","authProfileOverrideCompactionCount":2})",
       false, false},
  };
  for (const auto& c : table) {
    INFO(c.what);
    const auto old = row(c.json);
    CHECK(keeps_model_override_on_reset(old) == c.keeps_model);
    CHECK(keeps_auth_profile_override_on_reset(old) == c.keeps_auth);
    auto in = turn(&old, 10);
    in.trigger = trigger("/new");
    auto e = roll_session(in).entry;
    CHECK(e.has("modelOverride") == c.keeps_model);
    CHECK(e.has("authProfileOverride") == c.keeps_auth);
    CHECK_FALSE(e.has("modelOverrideFallbackOriginProvider"));
    if (c.keeps_model) CHECK(e.model_override_source() == "user");
    if (!c.keeps_model) CHECK_FALSE(e.has("modelOverrideSource"));
    if (c.keeps_auth) CHECK(e.auth_profile_override_source() == "user");
    if (!c.keeps_auth) CHECK_FALSE(e.has("authProfileOverrideCompactionCount"));
  }
}

TEST_CASE("usage family: key defaults to the sessionKey and ids accumulate over rollovers [R§2.2, R§4.3]") {
  auto current = row(R"({"sessionId": "A", "updatedAt": 1})");
  const char* ids[] = {"B", "C", "D"};
  std::vector<std::string> expected = {"A"};
  std::int64_t now = 100;
  for (const char* id : ids) {
    auto in = turn(&current, now += 100, id);
    in.trigger = trigger(id[0] == 'C' ? "/reset" : "/new");
    if (id[0] == 'D') {  // the third one is a stale rollover, not a command
      in.trigger = trigger("hi");
      in.freshness = stale(session_end_reason::idle);
    }
    auto r = roll_session(in);
    REQUIRE(r.new_session);
    expected.push_back(id);
    CHECK(r.entry.usage_family_key() == key);
    CHECK(r.entry.usage_family_session_ids() == expected);
    current = r.entry;
  }
  // A reuse keeps the family untouched; an existing family key is kept on rollover.
  auto reuse = roll_session(turn(&current, now + 1));
  CHECK(reuse.entry.usage_family_session_ids() == expected);
  auto custom = row(R"({"sessionId": "X", "updatedAt": 1, "usageFamilyKey": "family-1",
                        "usageFamilySessionIds": ["W", "X"]})");
  auto in = turn(&custom, 50, "Y");
  in.trigger = trigger("/new");
  auto r = roll_session(in);
  CHECK(r.entry.usage_family_key() == "family-1");
  CHECK(r.entry.usage_family_session_ids() == std::vector<std::string>{"W", "X", "Y"});
}

TEST_CASE("system events never roll a session and never extend lastInteractionAt [R§4.3]") {
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100, "sessionStartedAt": 50, "lastInteractionAt": 90})");
  for (auto kind : {inbound_kind::heartbeat, inbound_kind::cron_event, inbound_kind::exec_event}) {
    auto in = turn(&old, 10 * hour);
    in.kind = kind;
    in.freshness = stale(session_end_reason::idle);  // stale, yet kept
    auto r = roll_session(in);
    CHECK_FALSE(r.new_session);
    CHECK_FALSE(r.drop_queued_system_events);
    CHECK(r.entry.session_id() == "s1");
    CHECK(r.entry.last_interaction_at() == 90);
    CHECK(r.entry.session_started_at() == 50);
    CHECK(r.entry.updated_at() == 10 * hour);
  }
  CHECK_FALSE(is_system_event(inbound_kind::message));
  // With no row a system event does start one, without a lastInteractionAt.
  auto in = turn(nullptr, 1000);
  in.kind = inbound_kind::heartbeat;
  auto r = roll_session(in);
  CHECK(r.new_session);
  CHECK_FALSE(r.entry.has("lastInteractionAt"));
}

TEST_CASE("heartbeats and cron events every 10 minutes for a day do not keep an idle=60 session alive") {
  const auto& utc = *resolve_reset_zone("UTC").value();
  const reset_policy idle60{reset_mode::idle, 4, 60, true};
  const std::int64_t t0 = 1784534400000;  // 2026-07-20T08:00:00Z
  auto first = roll_session(turn(nullptr, t0, "S1"));
  session_entry current = first.entry;
  const inbound_kind kinds[] = {inbound_kind::heartbeat, inbound_kind::cron_event, inbound_kind::exec_event};
  int events = 0;
  for (std::int64_t t = t0 + 10 * minute; t <= t0 + 24 * hour; t += 10 * minute) {
    auto in = turn(&current, t);
    in.kind = kinds[events++ % 3];
    in.freshness = evaluate_freshness(lifecycle_timestamps_of(current), t, idle60, utc);
    CHECK(in.freshness.fresh == (t <= t0 + 60 * minute));  // the events do not extend it
    auto r = roll_session(in);
    REQUIRE_FALSE(r.new_session);
    CHECK(r.entry.last_interaction_at() == t0);
    CHECK(r.entry.updated_at() == t);
    current = r.entry;
  }
  CHECK(events == 144);
  // The next real message finds it idle-expired and starts a new session.
  const std::int64_t next = t0 + 24 * hour + 5 * minute;
  auto in = turn(&current, next, "S2");
  in.trigger = trigger("good morning");
  in.freshness = evaluate_freshness(lifecycle_timestamps_of(current), next, idle60, utc);
  auto r = roll_session(in);
  CHECK(r.new_session);
  CHECK(r.reason == session_end_reason::idle);
  CHECK(r.archive_session_id == "S1");
  CHECK(r.drop_queued_system_events);
  CHECK(r.entry.last_interaction_at() == next);
}

TEST_CASE("soft reset keeps even a stale session, reconnect resume keeps it too [R§4.3]") {
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100})");
  auto in = turn(&old, 5000);
  in.freshness = stale(session_end_reason::daily);
  in.trigger = trigger("/reset soft");
  CHECK_FALSE(roll_session(in).new_session);

  in.trigger = trigger("hello");
  in.reconnect_resume = true;
  CHECK_FALSE(roll_session(in).new_session);

  reset_trigger_options unauthorized;
  unauthorized.sender_authorized = false;
  in.reconnect_resume = false;
  in.trigger = parse_reset_trigger("/reset soft", unauthorized);
  auto r = roll_session(in);
  CHECK(r.new_session);
  CHECK(r.reason == session_end_reason::daily);
}

TEST_CASE("canReuse needs a sessionId and a numeric updatedAt [R§4.3]") {
  for (const char* json_text : {R"({"updatedAt": 100, "label": "x"})", R"({"sessionId": "s1", "updatedAt": "yesterday"})",
                                R"({"sessionId": "", "updatedAt": 100})"}) {
    INFO(json_text);
    const auto old = row(json_text);
    auto r = roll_session(turn(&old, 5000));  // freshness says fresh
    CHECK(r.new_session);
    CHECK_FALSE(r.reason);  // fresh: nothing "ended", nothing archived
    CHECK_FALSE(r.archive_session_id);
    CHECK_FALSE(r.drop_queued_system_events);
    CHECK(r.entry.session_id() == "new-id");
  }
}

TEST_CASE("/new <model>: the selection is written as a user override on the new row [R§4.4]") {
  const auto old = row(used_row);
  model_catalog catalog;
  catalog.allowed_keys = {"anthropic/claude-opus-4", "openai/gpt-4o"};
  catalog.aliases = {{"opus", "anthropic/claude-opus-4"}};
  catalog.default_key = "openai/gpt-4o";
  auto in = turn(&old, 5000);
  in.trigger = trigger("/new opus plan my week");
  auto r = roll_session(in);
  auto choice = parse_reset_model(in.trigger.first_message, catalog);
  REQUIRE(choice.selection);
  CHECK(choice.first_message == "plan my week");
  apply_model_selection(r.entry, *choice.selection);
  CHECK(r.entry.provider_override() == "anthropic");
  CHECK(r.entry.model_override() == "claude-opus-4");
  CHECK(r.entry.model_override_source() == "user");

  apply_model_selection(r.entry, model_selection{"openai", "gpt-4o", true});  // the default clears it
  CHECK_FALSE(r.entry.has("providerOverride"));
  CHECK_FALSE(r.entry.has("modelOverride"));
  CHECK_FALSE(r.entry.has("modelOverrideSource"));
}

TEST_CASE("cron: the base row is sanitized and every isolated run starts a new session [R§5.6]") {
  const auto base = row(R"({
    "sessionId": "cron-old", "updatedAt": 100, "sessionStartedAt": 100, "lastInteractionAt": 100,
    "thinkingLevel": "low", "verboseLevel": "on", "displayName": "Nightly",
    "modelOverride": "gpt-4o", "providerOverride": "openai", "modelOverrideSource": "user",
    "authProfileOverride": "openai:auto", "authProfileOverrideSource": "auto",
    "elevatedLevel": "on", "execHost": "gateway", "execAsk": "off",
    "route": {"channel": "slack"}, "deliveryContext": {"channel": "slack", "to": "C1"},
    "lastChannel": "slack", "lastTo": "C1", "lastAccountId": "a", "lastThreadId": "t1",
    "origin": {"provider": "slack"}, "acp": {"backend": "x"},
    "pendingFinalDelivery": true, "pendingFinalDeliveryText": "hi",
    "compactionCount": 2
  })");
  const cron_job_ref job{"job-42", "Nightly report"};
  auto clean = sanitize_cron_base_row(base, job);
  for (const char* k : {"elevatedLevel", "execHost", "execAsk", "route", "deliveryContext", "lastChannel", "lastTo",
                        "lastAccountId", "lastThreadId", "origin", "acp", "pendingFinalDelivery",
                        "pendingFinalDeliveryText", "authProfileOverride", "authProfileOverrideSource"}) {
    INFO(k);
    CHECK_FALSE(clean.has(k));
  }
  CHECK(clean.thinking_level() == "low");
  CHECK(clean.verbose_level() == "on");
  CHECK(clean.display_name() == "Nightly");
  CHECK(clean.model_override() == "gpt-4o");
  CHECK(clean.label() == "Cron: Nightly report");
  CHECK(sanitize_cron_base_row(base, cron_job_ref{"job-42", ""}).label() == "Cron: job-42");
  auto labelled = row(R"({"sessionId": "c", "updatedAt": 1, "label": "Mine"})");
  CHECK(sanitize_cron_base_row(labelled, job).label() == "Mine");

  CHECK(isolated_cron_run_forces_new_session);
  auto in = turn(nullptr, 5000, "cron-new");  // fresh by freshness: still a new session
  auto r = roll_isolated_cron_run(&base, job, in);
  CHECK(r.new_session);
  CHECK(r.reason == session_end_reason::new_session);
  CHECK(r.archive_session_id == "cron-old");
  CHECK(r.drop_queued_system_events);
  CHECK(r.entry.session_id() == "cron-new");
  CHECK(r.entry.label() == "Cron: Nightly report");
  CHECK(r.entry.thinking_level() == "low");
  CHECK(r.entry.compaction_count() == 0);
  CHECK_FALSE(r.entry.has("lastTo"));
  CHECK(r.entry.last_interaction_at() == 5000);

  auto first = roll_isolated_cron_run(nullptr, job, turn(nullptr, 10, "cron-1"));
  CHECK(first.new_session);
  CHECK_FALSE(first.reason);
}

TEST_CASE("a reused row that lacks some carried keys gets them at their {...entry, ...patch} position") {
  // A group row first written by a heartbeat (no channel / groupId yet), then a chat reuses it.
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100, "sessionStartedAt": 100, "lastInteractionAt": 100})");
  auto in = turn(&old, 200);
  in.trigger = trigger("hi");
  auto patch = json::parse_object(R"({
    "deliveryContext": {"channel": "telegram", "to": "telegram:-100"},
    "lastChannel": "telegram", "lastTo": "telegram:-100",
    "origin": {"provider": "telegram", "chatType": "group"},
    "channel": "telegram", "groupId": "-100"
  })");
  REQUIRE(patch.ok());
  in.inbound_patch = *patch;
  auto r = roll_session(in);
  CHECK_FALSE(r.new_session);
  const auto keys = keys_of(r.entry);
  auto at = [&](const char* k) { return std::find(keys.begin(), keys.end(), k) - keys.begin(); };
  REQUIRE(at("channel") < static_cast<std::ptrdiff_t>(keys.size()));
  CHECK(at("channel") < at("deliveryContext"));  // the carried slot, not the patch's order
  CHECK(at("groupId") < at("deliveryContext"));
}

TEST_CASE("roll_session gives the reference algorithm's row byte for byte, copied or rolled in place") {
  case_maker make(20261130);
  const cron_job_ref job{"job-42", "Nightly report"};
  int reused = 0, ended = 0, started = 0, inbound_new_keys = 0, compared = 0;
  auto same = [&](const rollover_input& in, const session_entry* current, const char* what) {
    const std::string expected = describe(reference::roll_session(in));
    const std::string copied = describe(roll_session(in));
    std::string in_place = copied;
    if (current) {  // as session_core calls it: in.current points at the row that is moved in
      session_entry owned = *current;
      rollover_input at_owned = in;
      at_owned.current = &owned;
      in_place = describe(roll_session(at_owned, std::move(owned)));
    }
    ++compared;
    if (copied == expected && in_place == expected) return true;
    INFO(what);
    INFO("row: " << (current ? json::to_compact(current->json()) : std::string("none")));
    INFO("inbound_patch: " << json::to_compact(in.inbound_patch));
    INFO("kind " << static_cast<int>(in.kind) << ", trigger " << static_cast<int>(in.trigger.command) << ", fresh "
                 << in.freshness.fresh << ", reconnect " << in.reconnect_resume << ", force_new " << in.force_new
                 << ", recovered " << in.recovered_started_at.value_or(-1) << ", path " << bool(in.transcript_path));
    CHECK(copied == expected);
    CHECK(in_place == expected);
    return false;
  };
  for (int i = 0; i < 4000; ++i) {
    std::optional<session_entry> current;
    if (make.chance(92)) current = make.row();
    const session_entry* row = current ? &*current : nullptr;
    const rollover_input in = make.turn(row);
    for (const auto& kv : in.inbound_patch)
      if (!row || !row->has(kv.key())) ++inbound_new_keys;
    if (!same(in, row, "first turn")) break;
    const rollover_result first = reference::roll_session(in);
    if (!first.new_session) ++reused;
    else if (first.reason) ++ended;
    else ++started;
    // A second turn on the row the first one built.
    const rollover_input next = make.turn(&first.entry);
    if (!same(next, &first.entry, "second turn")) break;
    if (row && i % 4 == 0) {  // an isolated cron run on this row: sanitized, then a forced new session
      rollover_input cron = make.turn(nullptr);
      session_entry sanitized = sanitize_cron_base_row(*row, job);
      rollover_input ref_in = cron;
      ref_in.current = &sanitized;
      ref_in.kind = inbound_kind::message;
      ref_in.force_new = true;
      rollover_result expected = reference::roll_session(ref_in);
      const auto label = expected.entry.label();  // labelled unless it has a non-blank one
      if (!label || label->find_first_not_of(" \t\n\r\f\v") == std::string_view::npos)
        expected.entry.set_label(cron_label(job));
      CHECK(describe(roll_isolated_cron_run(row, job, cron)) == describe(expected));
    }
  }
  CHECK(compared == 8000);
  // The cases cover every path, and inbound keys the row lacks (the ordering that can go wrong).
  CHECK(reused > 800);
  CHECK(ended > 800);
  CHECK(started > 200);
  CHECK(inbound_new_keys > 4000);
}

TEST_CASE("a new session places inbound keys the row lacks where the patch first named them") {
  // Stale: a new session. The group and route slots the row lacks are `undefined` in the patch,
  // so the inbound patch's channel/groupId land with the group fields, before deliveryContext,
  // although the inbound patch lists them last; origin is new to the patch and comes after.
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100, "custom": 1, "lastTo": "telegram:1", "model": "m"})");
  auto in = turn(&old, 5000);
  in.freshness = stale(session_end_reason::idle);
  auto patch = json::parse_object(R"({
    "chatType": "group", "deliveryContext": {"channel": "telegram", "to": "telegram:-100"},
    "lastChannel": "telegram", "lastTo": "telegram:-100", "origin": {"provider": "telegram"},
    "channel": "telegram", "groupId": "-100"
  })");
  REQUIRE(patch.ok());
  in.inbound_patch = *patch;
  const std::vector<std::string> expected = {
      "sessionId", "updatedAt", "custom", "lastTo",  // the row's survivors keep their places
      "sessionStartedAt", "lastInteractionAt", "systemSent", "abortedLastRun", "usageFamilyKey",
      "usageFamilySessionIds", "chatType", "channel", "groupId", "deliveryContext", "lastChannel", "origin",
      "sessionFile", "compactionCount", "totalTokens", "totalTokensFresh"};
  session_entry moved = old;
  for (const auto& r : {roll_session(in), roll_session(in, std::move(moved)), reference::roll_session(in)}) {
    CHECK(r.new_session);
    CHECK(keys_of(r.entry) == expected);
    CHECK(r.entry.last_to() == "telegram:-100");
    CHECK_FALSE(r.entry.has("model"));
  }
}

TEST_CASE("a reused row gets the chatType default and a label from inbound at their patch slots") {
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100, "sessionStartedAt": 100, "lastInteractionAt": 100,
                           "systemSent": true, "abortedLastRun": false, "sessionFile": "/f"})");
  auto in = turn(&old, 200);
  auto patch = json::parse_object(R"({"origin": {"provider": "telegram"}, "lastChannel": "telegram", "label": "L"})");
  REQUIRE(patch.ok());
  in.inbound_patch = *patch;
  std::vector<std::string> expected = keys_of(old);
  for (const char* k : {"label", "chatType", "lastChannel", "origin"}) expected.emplace_back(k);
  session_entry moved = old;
  for (const auto& r : {roll_session(in), roll_session(in, std::move(moved)), reference::roll_session(in)}) {
    CHECK_FALSE(r.new_session);
    CHECK(keys_of(r.entry) == expected);
    CHECK(r.entry.chat_type() == "direct");
    CHECK(r.entry.label() == "L");
  }
}

TEST_CASE("an inbound object equal to the row's but for its key order replaces it (the row is written as sent)") {
  const auto old = row(R"({"sessionId": "s1", "updatedAt": 100, "chatType": "direct",
                           "deliveryContext": {"channel": "telegram", "to": "telegram:1"}, "lastTo": "telegram:1"})");
  for (const char* body : {"hi", "/reset"}) {
    INFO(body);
    auto in = turn(&old, 200);
    in.trigger = trigger(body);
    auto patch = json::parse_object(R"({"deliveryContext": {"to": "telegram:1", "channel": "telegram"},
                                        "lastTo": "telegram:1", "chatType": "direct"})");
    REQUIRE(patch.ok());
    in.inbound_patch = *patch;
    session_entry moved = old;
    for (const auto& r : {roll_session(in), roll_session(in, std::move(moved))}) {
      CHECK(json::to_compact(r.entry.json().at("deliveryContext")) == R"({"to":"telegram:1","channel":"telegram"})");
      const auto keys = keys_of(r.entry);
      REQUIRE(keys.size() >= 5);
      // /reset deletes them first, the inbound patch sets them again: they keep the row's places.
      CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 5) ==
            std::vector<std::string>{"sessionId", "updatedAt", "chatType", "deliveryContext", "lastTo"});
      CHECK(describe(r) == describe(reference::roll_session(in)));
    }
  }
}

TEST_CASE("roll_session in place leaves the caller's row moved-from and reads nothing else of in.current") {
  const auto old = row(used_row);
  auto in = turn(&old, 5000);  // in.current points elsewhere: the moved-in row is the one rolled
  session_entry mine = old;
  json::set(mine.json(), "label", boost::json::string("Mine"));
  auto r = roll_session(in, std::move(mine));
  CHECK_FALSE(r.new_session);
  CHECK(r.entry.label() == "Mine");
  CHECK(r.entry.updated_at() == 5000);
  CHECK(mine.json().empty());  // moved into the result, not copied
}
