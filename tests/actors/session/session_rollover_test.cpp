// Expectations from [R§4.3] (decision, carry-over, cleared fields, usage family, system
// events), [R§2.2] (the minimal row and its key order), [R§4.4] and [R§5.6] (cron).
#include <catch2/catch.hpp>
#include <date/tz.h>

#include <algorithm>
#include <string>
#include <vector>

#include "actors/session/reset_policy.hpp"
#include "actors/session/session_rollover.hpp"
#include "messages/json_reader.hpp"

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
