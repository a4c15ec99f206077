// Expectations come from SPEC.md (defaults, §9 "names what was wrong"), the reference's key
// names and value forms ([R§1.2, §4.1, §6.1, §7.1, §9]) and the key table of
// runtime/config.hpp — not from running the code.
#include "runtime/config.hpp"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "messages/json_writer.hpp"
#include "runtime/config_values.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;
using actors::runtime_settings;

namespace {

env_lookup no_environment() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

env_lookup environment(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

config_load load_ok(std::string_view text, const env_lookup& env = no_environment()) {
  auto loaded = load_config_text(text, env);
  INFO(text);
  if (!loaded.ok()) FAIL(loaded.error().to_string());
  return std::move(loaded).value();
}

status load_error(std::string_view text, const env_lookup& env = no_environment()) {
  auto loaded = load_config_text(text, env);
  INFO(text);
  REQUIRE_FALSE(loaded.ok());
  return loaded.error();
}

// Every key of the layout with a value other than its default.
constexpr std::string_view non_default_config = R"({
  "stateDir": "/var/lib/srt",
  "workspaceDir": "/home/u/work",
  "workspaceWritable": false,
  "agents": {"list": [{"id": "home", "default": true}, {"id": "work"}]},
  "bindings": [
    {"agentId": "work",
     "match": {"channel": "slack", "accountId": "*", "teamId": "T1", "peer": {"kind": "group", "id": "C42"}},
     "session": {"dmScope": "per-peer"}},
    {"agentId": "home", "match": {"channel": "discord", "guildId": "G7", "roles": ["admin", "mod"]}}
  ],
  "session": {
    "dmScope": "per-channel-peer",
    "mainKey": "hub",
    "scope": "global",
    "identityLinks": {"zed": ["telegram:1"], "alice": ["telegram:1", "discord:9"]},
    "reset": {"mode": "idle", "atHour": 6, "idleMinutes": 90},
    "resetByType": {"direct": {"mode": "daily", "atHour": 3}, "dm": {"idleMinutes": 5},
                    "group": {"mode": "none"}, "thread": {"idleMinutes": 30}},
    "resetByChannel": {" Telegram ": {"mode": "daily", "atHour": 2}},
    "idleMinutes": 45,
    "resetTriggers": ["/fresh", "/wipe"],
    "timezone": "Asia/Tokyo",
    "writeLock": {"acquireTimeoutMs": "Infinity", "staleMs": "2h", "maxHoldMs": 120000},
    "passivateIdleMs": "5m",
    "trimIdleMs": "45s",
    "maxLiveSessions": 250,
    "maxMessageBytes": "64kb"
  },
  "storage": {"durability": "sync", "batchWindowMs": 12, "maxLineBytes": "4mb", "storeFlushWindowMs": "2s",
              "storeDurableAck": true, "storeSpillMinBytes": "1mb",
              "keepMaintenancePicture": false},
  "model": {"contextWindow": 128000, "provider": "sim", "model": "sim-large", "maxTokens": 4096},
  "compaction": {
    "enabled": false, "reserveTokens": 12000, "keepRecentTokens": 9000, "reserveTokensFloor": 0,
    "truncateAfterCompaction": true, "maxActiveTranscriptBytes": "1gb",
    "memoryFlush": {"enabled": false, "softThresholdTokens": 1500, "forceFlushTranscriptBytes": "500kb",
                    "prompt": "Save notes.", "systemPrompt": "Flush now.", "model": "sim/sim-small"}
  },
  "context": {"pressureFractions": [0.5, 0.8, 0.95]}
})";

void check_non_default_settings(const runtime_settings& s) {
  CHECK(s.state_dir == "/var/lib/srt");
  CHECK(s.workspace_dir == "/home/u/work");
  CHECK_FALSE(s.workspace_writable);

  REQUIRE(s.routing.agents.size() == 2);
  CHECK(s.routing.agents[0].id == "home");
  CHECK(s.routing.agents[0].is_default);
  CHECK(s.routing.agents[1].id == "work");
  CHECK_FALSE(s.routing.agents[1].is_default);

  REQUIRE(s.routing.bindings.size() == 2);
  const auto& slack = s.routing.bindings[0];
  CHECK(slack.agent_id == "work");
  CHECK(slack.match.channel == "slack");
  CHECK(slack.match.account_id == "*");
  CHECK(slack.match.team_id == "T1");
  REQUIRE(slack.match.peer);
  CHECK(slack.match.peer->kind == "group");
  CHECK(slack.match.peer->id == "C42");
  CHECK(slack.session_dm_scope == actors::dm_scope::per_peer);
  const auto& discord = s.routing.bindings[1];
  CHECK(discord.agent_id == "home");
  CHECK(discord.match.guild_id == "G7");
  CHECK(discord.match.roles == std::vector<std::string>{"admin", "mod"});
  CHECK_FALSE(discord.match.peer);
  CHECK_FALSE(discord.session_dm_scope);

  const auto& routing = s.routing.session;
  CHECK(routing.direct_message_scope == actors::dm_scope::per_channel_peer);
  CHECK(routing.main_key == "hub");
  CHECK(routing.scope == actors::session_scope::global);
  REQUIRE(routing.links.size() == 2);
  CHECK(routing.links[0].first == "zed");
  CHECK(routing.links[1] == std::pair<std::string, std::vector<std::string>>{"alice", {"telegram:1", "discord:9"}});

  const auto& reset = s.session.reset;
  REQUIRE(reset.reset);
  CHECK(reset.reset->mode == actors::reset_mode::idle);
  CHECK(reset.reset->at_hour == 6);
  CHECK(reset.reset->idle_minutes == 90);
  REQUIRE(reset.reset_by_type);
  REQUIRE(reset.reset_by_type->direct);
  CHECK(reset.reset_by_type->direct->mode == actors::reset_mode::daily);
  CHECK(reset.reset_by_type->direct->at_hour == 3);
  CHECK_FALSE(reset.reset_by_type->direct->idle_minutes);
  REQUIRE(reset.reset_by_type->dm);
  CHECK(reset.reset_by_type->dm->idle_minutes == 5);
  REQUIRE(reset.reset_by_type->group);
  CHECK(reset.reset_by_type->group->mode == actors::reset_mode::none);
  REQUIRE(reset.reset_by_type->thread);
  CHECK(reset.reset_by_type->thread->idle_minutes == 30);
  REQUIRE(reset.reset_by_channel.size() == 1);
  REQUIRE(reset.reset_by_channel.count("telegram") == 1);  // trimmed and lowercased [R§4.1]
  CHECK(reset.reset_by_channel.at("telegram").at_hour == 2);
  CHECK(reset.idle_minutes == 45);
  CHECK(reset.reset_triggers == std::vector<std::string>{"/fresh", "/wipe"});
  CHECK(reset.timezone == "Asia/Tokyo");

  CHECK(s.session.write_lock.acquire_timeout_ms == storage::write_lock_options::infinite);
  CHECK(s.session.write_lock.stale_ms == 2 * 3600 * 1000);
  CHECK(s.session.write_lock.max_hold_ms == 120000);
  CHECK(s.session.passivate_idle_ms == 5 * 60 * 1000);
  CHECK(s.session.trim_idle_ms == 45 * 1000);
  CHECK(s.session.max_live_sessions == 250);
  CHECK(s.session.max_message_bytes == 64 * 1024);

  CHECK(s.storage.durability == storage::durability::sync);
  CHECK(s.storage.batch_window_ms == 12);
  CHECK(s.storage.max_line_bytes == 4u * 1024 * 1024);
  CHECK(s.storage.store_flush_window_ms == 2000);
  CHECK(s.storage.store_durable_ack);
  CHECK(s.storage.store_spill_min_bytes == std::optional<std::size_t>(1024u * 1024));
  CHECK(s.storage.keep_maintenance_picture == std::optional<bool>(false));

  CHECK(s.model.context_window == 128000);
  CHECK(s.model.provider == "sim");
  CHECK(s.model.model == "sim-large");
  CHECK(s.model.max_tokens == 4096);

  CHECK_FALSE(s.compaction.enabled);
  CHECK(s.compaction.reserve_tokens == 12000);
  CHECK(s.compaction.keep_recent_tokens == 9000);
  CHECK(s.compaction.reserve_tokens_floor == 0);
  CHECK(s.compaction.truncate_after_compaction);
  CHECK(s.compaction.max_active_transcript_bytes == std::uint64_t{1} << 30);
  CHECK_FALSE(s.memory_flush.enabled);
  CHECK(s.memory_flush.soft_threshold_tokens == 1500);
  CHECK(s.memory_flush.force_flush_transcript_bytes == 500 * 1024);
  CHECK(s.memory_flush.prompt == "Save notes.");
  CHECK(s.memory_flush.system_prompt == "Flush now.");
  CHECK(s.memory_flush.model == "sim/sim-small");

  CHECK(s.pressure.fractions == std::vector<double>{0.5, 0.8, 0.95});
}

}  // namespace

TEST_CASE("config: an empty object gives the SPEC defaults") {
  config_load loaded = load_ok("{}");
  const runtime_settings& s = loaded.settings;
  CHECK(loaded.warnings.empty());
  // §2: DMs by session.dmScope, "main" by default, main key "main".
  CHECK(s.routing.session.direct_message_scope == actors::dm_scope::main);
  CHECK(s.routing.session.main_key == "main");
  CHECK(s.routing.agents.empty());
  // §3: daily reset at 4:00 local time of the gateway host.
  actors::reset_policy policy = actors::resolve_reset_policy(s.session.reset, actors::reset_type::direct);
  CHECK(policy.mode == actors::reset_mode::daily);
  CHECK(policy.at_hour == 4);
  CHECK(s.session.reset.timezone.empty());
  // §1.2: storage.durability batch by default. §1.1: store writes coalesced, default 50 ms.
  CHECK(s.storage.durability == storage::durability::batch);
  CHECK(s.storage.store_flush_window_ms == 50);
  CHECK_FALSE(s.storage.store_durable_ack);
  CHECK_FALSE(s.storage.store_spill_min_bytes.has_value());  // the runtime decides by where the files are
  CHECK_FALSE(s.storage.keep_maintenance_picture.has_value());  // the runtime decides by its clock
  // §1.3 / [R§9]: acquireTimeoutMs 60000, staleMs 1800000, maxHoldMs 300000.
  CHECK(s.session.write_lock.acquire_timeout_ms == 60000);
  CHECK(s.session.write_lock.stale_ms == 1800000);
  CHECK(s.session.write_lock.max_hold_ms == 300000);
  // §4: reserveTokensFloor 20000, keepRecentTokens 20000, softThresholdTokens 4000,
  // pressure at 75% and 90%. [R§6.1] reserveTokens 16384. [R§7.1] force flush at 2 MiB.
  CHECK(s.compaction.reserve_tokens_floor == 20000);
  CHECK(s.compaction.keep_recent_tokens == 20000);
  CHECK(s.compaction.reserve_tokens == 16384);
  CHECK_FALSE(s.compaction.truncate_after_compaction);
  CHECK(s.memory_flush.soft_threshold_tokens == 4000);
  CHECK(s.memory_flush.force_flush_transcript_bytes == 2097152);
  CHECK(s.pressure.fractions == std::vector<double>{0.75, 0.90});
  // No environment: no state dir chosen here.
  CHECK(s.state_dir.empty());
}

TEST_CASE("config: null values keep the defaults") {
  config_load loaded = load_ok(R"({"session": {"dmScope": null, "reset": null}, "compaction": null})");
  CHECK(loaded.settings.routing.session.direct_message_scope == actors::dm_scope::main);
  CHECK_FALSE(loaded.settings.session.reset.reset);
  CHECK(loaded.settings.compaction.reserve_tokens_floor == 20000);
}

TEST_CASE("config: every key set to a non-default value is read back") {
  config_load loaded = load_ok(non_default_config);
  // maxActiveTranscriptBytes is set together with truncateAfterCompaction: no warning.
  CHECK(loaded.warnings.empty());
  check_non_default_settings(loaded.settings);
}

TEST_CASE("config: settings_to_json output loads back to equal settings") {
  SECTION("a non-default configuration") {
    config_load first = load_ok(non_default_config);
    std::string shown = json::to_pretty(settings_to_json(first.settings));
    config_load second = load_ok(shown);
    CHECK(second.warnings.empty());
    check_non_default_settings(second.settings);
    CHECK(json::to_pretty(settings_to_json(second.settings)) == shown);
    // The layout is the documented one, e.g. the infinite acquire timeout is "Infinity".
    auto json = settings_to_json(first.settings);
    CHECK(json.at("session").at("writeLock").at("acquireTimeoutMs") == "Infinity");
    CHECK(json.at("session").at("identityLinks").as_object().begin()->key() == "zed");
  }
  SECTION("the defaults") {
    config_load defaults = load_ok("{}");
    std::string shown = json::to_pretty(settings_to_json(defaults.settings));
    config_load again = load_ok(shown);
    CHECK(again.warnings.empty());
    CHECK(json::to_pretty(settings_to_json(again.settings)) == shown);
    CHECK_FALSE(again.settings.session.reset.reset);
    CHECK_FALSE(again.settings.session.reset.reset_by_type);
    CHECK(again.settings.session.reset.reset_triggers.empty());
    CHECK_FALSE(again.settings.compaction.max_active_transcript_bytes);
  }
}

TEST_CASE("config: identityLinks keep the file order, so the first listed name wins") {
  config_load loaded = load_ok(R"({"session": {"identityLinks": {
      "zed": ["telegram:1"], "alice": ["telegram:1"], "bob": ["discord:2"]}}})");
  const auto& links = loaded.settings.routing.session.links;
  REQUIRE(links.size() == 3);
  CHECK(links[0].first == "zed");
  CHECK(links[1].first == "alice");
  CHECK(links[2].first == "bob");
  // [R§1.2]: the first canonical name in insertion order that lists the id wins.
  CHECK(actors::resolve_linked_peer_id(links, "telegram", "1") == "zed");
}

TEST_CASE("config: a wrong type or value is an error naming the key path and the reason") {
  struct bad_config {
    std::string text;
    std::string message;
  };
  const std::vector<bad_config> cases = {
      // wrong types
      {R"({"session": {"reset": {"atHour": "four"}}})",
       R"(config key session.reset.atHour: expected a whole number from 0 to 23, got "four")"},
      {R"({"workspaceWritable": "yes"})", R"(config key workspaceWritable: expected true or false, got "yes")"},
      {R"({"storage": {"storeDurableAck": 1}})", "config key storage.storeDurableAck: expected true or false, got 1"},
      {R"({"storage": {"keepMaintenancePicture": "no"}})",
       R"(config key storage.keepMaintenancePicture: expected true or false, got "no")"},
      {R"({"session": "main"})", R"(config key session: expected an object, got "main")"},
      {R"({"stateDir": 7})", "config key stateDir: expected a string, got 7"},
      {R"({"session": {"resetTriggers": "/new"}})",
       R"(config key session.resetTriggers: expected an array of strings, got "/new")"},
      {R"({"bindings": [{"agentId": "a", "match": {"channel": "x", "roles": ["r", 7]}}]})",
       "config key bindings[0].match.roles[1]: expected a string, got 7"},
      {R"({"session": {"identityLinks": {"a.b": "telegram:1"}}})",
       R"(config key session.identityLinks["a.b"]: expected an array of strings, got "telegram:1")"},
      {R"({"bindings": {"agentId": "a"}})", "config key bindings: expected an array, got an object"},
      {R"({"context": {"pressureFractions": [0.5, "high"]}})",
       R"(config key context.pressureFractions[1]: expected a number in (0, 1), got "high")"},
      // out of range
      {R"({"session": {"reset": {"atHour": 24}}})",
       "config key session.reset.atHour: expected a whole number from 0 to 23, got 24"},
      {R"({"session": {"resetByType": {"group": {"atHour": 4.5}}}})",
       "config key session.resetByType.group.atHour: expected a whole number from 0 to 23, got 4.5"},
      {R"({"session": {"idleMinutes": -1}})", "config key session.idleMinutes: expected a whole number >= 0, got -1"},
      {R"({"session": {"maxLiveSessions": 0}})",
       "config key session.maxLiveSessions: expected a whole number >= 1, got 0"},
      {R"({"model": {"contextWindow": 1e300}})",
       "config key model.contextWindow: expected a whole number >= 1, got 1e+300"},
      {R"({"compaction": {"keepRecentTokens": 0}})",
       "config key compaction.keepRecentTokens: expected a whole number >= 1, got 0"},
      {R"({"session": {"writeLock": {"acquireTimeoutMs": 0}}})",
       "config key session.writeLock.acquireTimeoutMs: expected a duration in milliseconds of at least 1, got 0"},
      {R"({"context": {"pressureFractions": [0.9, 0.75]}})",
       "config key context.pressureFractions: context.pressure fraction 0.75 follows 0.9; list the fractions in "
       "ascending order without repeats"},
      // bad enum values
      {R"({"session": {"dmScope": "per-user"}})",
       R"(config key session.dmScope: expected one of "main", "per-peer", "per-channel-peer", "per-account-channel-peer", got "per-user")"},
      {R"({"storage": {"durability": "fsync"}})",
       R"(config key storage.durability: expected one of "none", "batch", "sync", got "fsync")"},
      {R"({"session": {"resetByChannel": {"discord": {"mode": "weekly"}}}})",
       R"(config key session.resetByChannel.discord.mode: expected one of "daily", "idle", "none", got "weekly")"},
      {R"({"storage": {"durability": "batch-with-a-very-long-explanation-appended"}})",
       R"(config key storage.durability: expected one of "none", "batch", "sync", got "batch-with-a-very-long-explanation-appen…")"},
      {R"({"session": {"scope": 1}})", R"(config key session.scope: expected one of "per-sender", "global", got 1)"},
      {R"({"bindings": [{"agentId": "a", "match": {"channel": "x"}, "session": {"dmScope": "all"}}]})",
       R"(config key bindings[0].session.dmScope: expected one of "main", "per-peer", "per-channel-peer", "per-account-channel-peer", got "all")"},
      // bad byte sizes
      {R"({"storage": {"maxLineBytes": "2 parsecs"}})",
       R"(config key storage.maxLineBytes: expected a byte size (a whole number of bytes, or a string such as "500kb", "2mb", "1gb"), got "2 parsecs")"},
      {R"({"compaction": {"memoryFlush": {"forceFlushTranscriptBytes": -1}}})",
       R"(config key compaction.memoryFlush.forceFlushTranscriptBytes: expected a byte size (a whole number of bytes, or a string such as "500kb", "2mb", "1gb"), got -1)"},
      {R"({"session": {"maxMessageBytes": "0kb"}})",
       R"(config key session.maxMessageBytes: expected a byte size of at least 1, got "0kb")"},
      // bad durations
      {R"({"session": {"trimIdleMs": -1}})",
       R"(config key session.trimIdleMs: expected a duration (whole milliseconds, or a string such as "30s", "10m", "24h", "7d"), got -1)"},
      {R"({"session": {"passivateIdleMs": "10 minutes"}})",
       R"(config key session.passivateIdleMs: expected a duration (whole milliseconds, or a string such as "30s", "10m", "24h", "7d"), got "10 minutes")"},
      {R"({"session": {"writeLock": {"staleMs": "Infinity"}}})",
       R"(config key session.writeLock.staleMs: expected a duration (whole milliseconds, or a string such as "30s", "10m", "24h", "7d"), got "Infinity")"},
      {R"({"session": {"writeLock": {"acquireTimeoutMs": "soon"}}})",
       R"(config key session.writeLock.acquireTimeoutMs: expected a duration (whole milliseconds, or a string such as "30s", "10m", "24h", "7d", or "Infinity"), got "soon")"},
      // bad timezone
      {R"({"session": {"timezone": "Mars/Olympus_Mons"}})",
       R"(config key session.timezone: "Mars/Olympus_Mons" is not a time zone of the IANA database; use a name such as "Europe/Berlin", or "" for the host's zone)"},
      // required keys and duplicates
      {R"({"bindings": [{"match": {"channel": "x"}}]})",
       "config key bindings[0].agentId: is required (the agent this binding routes to)"},
      {R"({"bindings": [{"agentId": "a"}]})",
       "config key bindings[0].match.channel: is required (a binding without a channel never matches)"},
      {R"({"bindings": [{"agentId": "a", "match": {"channel": "x", "peer": {"kind": "direct"}}}]})",
       R"(config key bindings[0].match.peer.id: is required (a peer id, or "*" for every peer of the kind))"},
      {R"({"agents": {"list": [{"id": "Main"}, {"id": "main"}]}})",
       R"(config key agents.list[1].id: agent "main" is already listed at agents.list[0])"},
      {R"({"agents": {"list": [{"default": true}]}})",
       "config key agents.list[0].id: is required (a non-empty string)"},
      {R"({"session": {"resetByChannel": {"telegram": {}, "Telegram": {}}}})",
       "config key session.resetByChannel.Telegram: names the same channel as session.resetByChannel.telegram "
       "(channel names are compared trimmed and lowercased)"},
      // the alias location names itself
      {R"({"agents": {"defaults": {"compaction": {"reserveTokens": -5}}}})",
       "config key agents.defaults.compaction.reserveTokens: expected a whole number >= 0, got -5"},
  };
  for (const auto& c : cases) {
    status error = load_error(c.text);
    INFO(c.text);
    CHECK(error.code() == errc::invalid_argument);
    CHECK(error.message() == c.message);
  }
}

TEST_CASE("config: invalid JSON names the byte offset and a non-object top level is refused") {
  status truncated = load_error(R"({"session": {)");
  CHECK(truncated.code() == errc::corrupt);
  CHECK_THAT(truncated.message(), Catch::StartsWith("config: invalid JSON at byte "));
  status comment = load_error("{\n  // JSON5 comments are not JSON\n}");
  CHECK_THAT(comment.message(), Catch::StartsWith("config: invalid JSON at byte 4"));
  status array = load_error("[1, 2]");
  CHECK(array.code() == errc::invalid_argument);
  CHECK(array.message() == "config: the top level must be a JSON object ({...}), got an array");
  CHECK(load_error(R"("stateDir")").message() ==
        R"(config: the top level must be a JSON object ({...}), got "stateDir")");
}

TEST_CASE("config: unknown keys are warned about with the closest known key") {
  config_load loaded = load_ok(R"({
    "sesion": {},
    "session": {"resetTrigger": ["/x"], "dmscope": "per-peer", "reset": {"at_hour": 5}},
    "gateway": {"prot": 1},
    "bindings": [{"agentId": "a", "match": {"channel": "x", "chanel": "y"}}],
    "compaction": {"memoryFlush": {"softThreshold": 1}}
  })");
  CHECK(loaded.warnings == std::vector<std::string>{
                               "unknown config key sesion (did you mean session?)",
                               "unknown config key session.resetTrigger (did you mean session.resetTriggers?)",
                               "unknown config key session.dmscope (did you mean session.dmScope?)",
                               "unknown config key session.reset.at_hour (did you mean session.reset.atHour?)",
                               "unknown config key gateway.prot",
                               "unknown config key bindings[0].match.chanel (did you mean bindings[0].match.channel?)",
                               "unknown config key compaction.memoryFlush.softThreshold (did you mean "
                               "compaction.memoryFlush.softThresholdTokens?)",
                           });
  // Unknown keys have no effect.
  CHECK(loaded.settings.session.reset.reset_triggers.empty());
  CHECK(loaded.settings.routing.session.direct_message_scope == actors::dm_scope::main);
  REQUIRE(loaded.settings.session.reset.reset);
  CHECK_FALSE(loaded.settings.session.reset.reset->at_hour);
}

TEST_CASE("config: settings that would have no effect are warned about") {
  config_load orphan_limit = load_ok(R"({"compaction": {"maxActiveTranscriptBytes": "10mb"}})");
  CHECK(orphan_limit.warnings ==
        std::vector<std::string>{"config key compaction.maxActiveTranscriptBytes has no effect unless "
                                 "compaction.truncateAfterCompaction is true"});
  config_load unlisted = load_ok(R"({"agents": {"list": [{"id": "home"}]},
      "bindings": [{"agentId": "Work", "match": {"channel": "slack"}}]})");
  CHECK(unlisted.warnings ==
        std::vector<std::string>{"config key bindings[0].agentId: agent \"work\" is not in agents.list; its events "
                                 "go to the default agent \"home\""});
}

TEST_CASE("config: agents.defaults.compaction is an alias of compaction") {
  SECTION("alone it applies") {
    config_load loaded = load_ok(R"({"agents": {"defaults": {"compaction": {
        "reserveTokensFloor": 5000, "memoryFlush": {"softThresholdTokens": 100}}}}})");
    CHECK(loaded.warnings.empty());
    CHECK(loaded.settings.compaction.reserve_tokens_floor == 5000);
    CHECK(loaded.settings.memory_flush.soft_threshold_tokens == 100);
  }
  SECTION("with compaction too, compaction wins key by key, whatever the order in the file") {
    config_load loaded = load_ok(R"({
        "compaction": {"reserveTokens": 1000},
        "agents": {"defaults": {"compaction": {"reserveTokens": 2000, "keepRecentTokens": 3000}}}})");
    CHECK(loaded.warnings ==
          std::vector<std::string>{"config keys compaction and agents.defaults.compaction are both set; where both "
                                   "set a key, compaction wins"});
    CHECK(loaded.settings.compaction.reserve_tokens == 1000);
    CHECK(loaded.settings.compaction.keep_recent_tokens == 3000);
  }
  SECTION("unknown keys under the alias are named with its path") {
    config_load loaded = load_ok(R"({"agents": {"defaults": {"compaction": {"reserveToken": 1}, "model": "x"}}})");
    CHECK(loaded.warnings ==
          std::vector<std::string>{"unknown config key agents.defaults.model",
                                   "unknown config key agents.defaults.compaction.reserveToken (did you mean "
                                   "agents.defaults.compaction.reserveTokens?)"});
  }
}

TEST_CASE("config: the environment gives the state dir and overrides the write lock") {
  SECTION("SESSIONRT_STATE_DIR applies only when the file has no stateDir") {
    auto env = environment({{"SESSIONRT_STATE_DIR", "/env/state"}});
    CHECK(load_ok("{}", env).settings.state_dir == "/env/state");
    CHECK(load_ok(R"({"stateDir": "/file/state"})", env).settings.state_dir == "/file/state");
    CHECK(load_ok("{}", environment({{"SESSIONRT_STATE_DIR", ""}})).settings.state_dir.empty());
    // "~" is expanded as runtime::start expands it, not kept as a directory named "~".
    auto home = environment({{"SESSIONRT_STATE_DIR", "~/state/"}, {"HOME", "/home/u"}});
    CHECK(load_ok("{}", home).settings.state_dir == "/home/u/state");
    CHECK(load_error("{}", environment({{"SESSIONRT_STATE_DIR", "~/state"}})).code() == errc::invalid_argument);
  }
  SECTION("write lock variables win over the file [R§9]") {
    constexpr std::string_view text =
        R"({"session": {"writeLock": {"acquireTimeoutMs": 9000, "staleMs": 9000, "maxHoldMs": 9000}}})";
    auto env = environment({{"SESSIONRT_SESSION_WRITE_LOCK_ACQUIRE_TIMEOUT_MS", "5000"},
                            {"OPENCLAW_SESSION_WRITE_LOCK_STALE_MS", "7000"}});
    const auto& lock = load_ok(text, env).settings.session.write_lock;
    CHECK(lock.acquire_timeout_ms == 5000);
    CHECK(lock.stale_ms == 7000);
    CHECK(lock.max_hold_ms == 9000);
  }
  SECTION("a bad environment value is an error naming the variable") {
    status error = load_error("{}", environment({{"SESSIONRT_SESSION_WRITE_LOCK_STALE_MS", "soon"}}));
    CHECK(error.code() == errc::invalid_argument);
    CHECK_THAT(error.message(), Catch::Contains("SESSIONRT_SESSION_WRITE_LOCK_STALE_MS='soon'"));
  }
}

TEST_CASE("config: byte sizes and durations in their text forms") {
  // Byte sizes are 1024-based, as OpenClaw's parseByteSize ("2mb" is its 2 MiB default [R§7.1]).
  CHECK(parse_byte_size("500kb") == 500 * 1024);
  CHECK(parse_byte_size("2mb") == 2097152);
  CHECK(parse_byte_size("1GB") == 1073741824);
  CHECK(parse_byte_size(" 2 MiB ") == 2097152);
  CHECK(parse_byte_size("1.5k") == 1536);
  CHECK(parse_byte_size("123") == 123);
  CHECK(parse_byte_size("7b") == 7);
  for (std::string_view bad : {"", "kb", "-1kb", "2 parsecs", "1e3", "1..5mb", "2 m b"}) {
    INFO(bad);
    CHECK_FALSE(parse_byte_size(bad));
  }
  CHECK(parse_duration_ms("30s") == 30000);
  CHECK(parse_duration_ms("10m") == 600000);
  CHECK(parse_duration_ms("24h") == 86400000);
  CHECK(parse_duration_ms("7d") == 604800000);
  CHECK(parse_duration_ms("250ms") == 250);
  CHECK(parse_duration_ms("1.5h") == 5400000);
  CHECK(parse_duration_ms("42") == 42);
  for (std::string_view bad : {"", "s", "10 minutes", "3w", "-5s", "Infinity", "99999999999999d"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration_ms(bad));
  }
  // JSON numbers are bytes / milliseconds; strings take the unit forms.
  config_load loaded = load_ok(R"({"storage": {"maxLineBytes": 1000, "batchWindowMs": "0.5s"}})");
  CHECK(loaded.settings.storage.max_line_bytes == 1000);
  CHECK(loaded.settings.storage.batch_window_ms == 500);
}

TEST_CASE("config: typo suggestions need a close key") {
  const std::vector<std::string_view> known = {"reset", "resetTriggers", "resetByType", "timezone"};
  CHECK(key_distance("resetTrigger", "resetTriggers") == 1);
  CHECK(key_distance("TimeZone", "timezone") == 0);
  CHECK(closest_key("resetTrigger", known) == "resetTriggers");
  CHECK(closest_key("timeZone", known) == "timezone");
  CHECK(closest_key("rest", known) == "reset");
  CHECK_FALSE(closest_key("maintenance", known));
  CHECK_FALSE(closest_key("zz", known));
}

TEST_CASE("config: load_config_file reads through fs and names the file in errors") {
  testing::temp_dir dir;
  const std::string good = dir.file("sessionrt.json");
  testing::write_text(good, R"({"storage": {"durability": "none"}})");
  auto loaded = load_config_file(storage::posix_fs(), good, no_environment());
  REQUIRE(loaded.ok());
  CHECK(loaded->settings.storage.durability == storage::durability::none);

  const std::string bad = dir.file("bad.json");
  testing::write_text(bad, R"({"storage": {"durability": "fast"}})");
  auto refused = load_config_file(storage::posix_fs(), bad, no_environment());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message(), Catch::StartsWith(bad + ": config key storage.durability: "));

  auto missing = load_config_file(storage::posix_fs(), dir.file("missing.json"), no_environment());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == errc::not_found);
  CHECK_THAT(missing.error().message(), Catch::Contains(dir.file("missing.json")));
}
