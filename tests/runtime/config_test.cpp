// Expectations come from SPEC.md (defaults, §9 "names what was wrong"), the reference's key
// names and value forms ([R§1.2, §4.1, §6.1, §7.1, §9]) and the key table of
// runtime/config.hpp — not from running the code.
#include "runtime/config.hpp"

#include <algorithm>
#include <filesystem>
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
  "agents": {
    "list": [{"id": "home", "default": true, "model": "work-llm/big", "systemPrompt": "You are at home."},
             {"id": "Work Bot", "model": {"primary": "fast", "fallbacks": ["openai/gpt-4o"]}}],
    "defaults": {
      "model": {"primary": "work-llm/big", "fallbacks": ["anthropic/claude-sonnet-4-6", "work-llm/small"]},
      "models": {"work-llm/small": {"alias": "fast"}},
      "maxToolIterations": 7,
      "systemPrompt": "Be brief."
    }
  },
  "bindings": [
    {"agentId": "work bot",
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
  "models": {
    "providers": {
      "work-llm": {
        "baseUrl": "http://127.0.0.1:1234/v1", "apiKey": "${WORK_KEY}", "headers": {"X-Org": "${WORK_ORG}"},
        "timeoutSeconds": 90,
        "models": [
          {"id": "big", "name": "Big one", "contextWindow": 131072, "contextTokens": 100000, "maxTokens": 8192,
           "reasoning": true, "input": ["text", "image"],
           "cost": {"input": 1.5, "output": 6, "cacheRead": 0.25, "cacheWrite": 2},
           "compat": {"supportsUsageInStreaming": false, "maxTokensField": "max_completion_tokens",
                      "supportsDeveloperRole": false}},
          {"id": "small", "api": "openai-responses"}
        ]
      },
      "anthropic": {"api": "anthropic-messages", "apiKey": "${ANTHROPIC_KEY}",
                    "models": [{"id": "claude-sonnet-4-6", "contextWindow": 1000000, "maxTokens": 64000}]}
    },
    "retry": {"maxDelayMs": "30s", "maxAttempts": 2}
  },
  "compaction": {
    "enabled": false, "reserveTokens": 12000, "keepRecentTokens": 9000, "reserveTokensFloor": 0,
    "truncateAfterCompaction": true, "maxActiveTranscriptBytes": "1gb",
    "memoryFlush": {"enabled": false, "softThresholdTokens": 1500, "forceFlushTranscriptBytes": "500kb",
                    "prompt": "Save notes.", "systemPrompt": "Flush now.", "model": "sim/sim-small"}
  },
  "context": {"pressureFractions": [0.5, 0.8, 0.95]}
})";

// The variables non_default_config names.
env_lookup non_default_environment() {
  return environment({{"WORK_KEY", "wk-123"}, {"WORK_ORG", "acme"}, {"ANTHROPIC_KEY", "ak-456"}});
}

// non_default_config sets the four deprecated model.* keys, in this order.
const std::vector<std::string> legacy_model_warnings = {
    "config key model.contextWindow is deprecated: set models.providers.<id>.models[].contextWindow",
    "config key model.provider is deprecated: set agents.defaults.model (\"provider/model\")",
    "config key model.model is deprecated: set agents.defaults.model (\"provider/model\")",
    "config key model.maxTokens is deprecated: set models.providers.<id>.models[].maxTokens",
};

void check_non_default_settings(const runtime_settings& s) {
  CHECK(s.state_dir == "/var/lib/srt");
  CHECK(s.workspace_dir == "/home/u/work");
  CHECK_FALSE(s.workspace_writable);

  REQUIRE(s.routing.agents.size() == 2);
  CHECK(s.routing.agents[0].id == "home");
  CHECK(s.routing.agents[0].is_default);
  CHECK(s.routing.agents[1].id == "Work Bot");
  CHECK_FALSE(s.routing.agents[1].is_default);

  // Models: providers in file order with every field, refs, aliases, per-agent choices.
  const auto& models = s.models;
  REQUIRE(models.providers.size() == 2);
  const auto& work = models.providers[0];
  CHECK(work.id == "work-llm");
  CHECK(work.base_url == "http://127.0.0.1:1234/v1");
  CHECK(work.api_key == "wk-123");
  CHECK(work.api_key_source == "${WORK_KEY}");
  CHECK(work.api == "openai-completions");  // a baseUrl and no api
  CHECK(work.headers == std::vector<std::pair<std::string, std::string>>{{"X-Org", "acme"}});
  CHECK(work.timeout_seconds == 90);
  REQUIRE(work.models.size() == 2);
  const auto& big = work.models[0];
  CHECK(big.id == "big");
  CHECK(big.name == "Big one");
  CHECK(big.api.empty());
  CHECK(big.context_window == 131072);
  CHECK(big.context_tokens == std::optional<std::int64_t>(100000));
  CHECK(big.effective_window() == 100000);
  CHECK(big.max_tokens == 8192);
  CHECK(big.reasoning);
  CHECK(big.input == std::vector<std::string>{"text", "image"});
  CHECK(big.cost.input == 1.5);
  CHECK(big.cost.output == 6);
  CHECK(big.cost.cache_read == 0.25);
  CHECK(big.cost.cache_write == 2);
  CHECK(big.compat.supports_usage_in_streaming == std::optional<bool>(false));
  CHECK(big.compat.max_tokens_field == "max_completion_tokens");
  CHECK(big.compat.supports_developer_role == std::optional<bool>(false));
  CHECK(big.aliases.empty());
  const auto& small = work.models[1];
  CHECK(small.id == "small");
  CHECK(small.api == "openai-responses");
  CHECK(small.context_window == 200000);
  CHECK(small.aliases == std::vector<std::string>{"fast"});
  const auto& anthropic = models.providers[1];
  CHECK(anthropic.id == "anthropic");
  CHECK(anthropic.base_url.empty());
  CHECK(anthropic.api == "anthropic-messages");
  CHECK(anthropic.api_key == "ak-456");
  REQUIRE(anthropic.models.size() == 1);
  CHECK(anthropic.models[0].context_window == 1000000);
  CHECK(anthropic.models[0].max_tokens == 64000);
  CHECK(models.defaults.primary == "work-llm/big");
  CHECK(models.defaults.fallbacks == std::vector<std::string>{"anthropic/claude-sonnet-4-6", "work-llm/small"});
  REQUIRE(models.by_agent.size() == 2);
  CHECK(models.by_agent.at("home").primary == "work-llm/big");
  CHECK(models.by_agent.at("home").fallbacks.empty());
  CHECK(models.by_agent.at("work-bot").primary == "fast");  // normalized as agents.list[].id
  CHECK(models.by_agent.at("work-bot").fallbacks == std::vector<std::string>{"openai/gpt-4o"});
  CHECK(models.max_tool_iterations == 7);
  CHECK(models.retry_max_delay_ms == 30000);
  CHECK(models.retry_max_attempts == 2);
  CHECK(s.prompts.defaults == "Be brief.");
  CHECK(s.prompts.by_agent == std::map<std::string, std::string>{{"home", "You are at home."}});

  REQUIRE(s.routing.bindings.size() == 2);
  const auto& slack = s.routing.bindings[0];
  CHECK(slack.agent_id == "work bot");
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

TEST_CASE("config: an empty object gives the SPEC defaults", "[config]") {
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
  // §1.2: storage.durability batch by default. §1.1: store writes coalesced: unset, 5 s with
  // batch (the commit log holds every row change), 50 ms otherwise.
  CHECK(s.storage.durability == storage::durability::batch);
  CHECK_FALSE(s.storage.store_flush_window_ms.has_value());
  CHECK(actors::store_flush_window(s.storage) == 5000);
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
  // No models configured: the legacy model.* defaults, no refs, the models_settings defaults.
  CHECK(s.models.providers.empty());
  CHECK(s.models.defaults.empty());
  CHECK(s.models.by_agent.empty());
  CHECK(s.models.retry_max_delay_ms == 60000);
  CHECK(s.models.retry_max_attempts == 4);
  CHECK(s.models.max_tool_iterations == 20);
  CHECK(s.prompts.defaults.empty());
  CHECK(s.prompts.by_agent.empty());
  CHECK(s.model.context_window == 200000);
}

TEST_CASE("config: null values keep the defaults", "[config]") {
  config_load loaded = load_ok(R"({"session": {"dmScope": null, "reset": null}, "compaction": null})");
  CHECK(loaded.settings.routing.session.direct_message_scope == actors::dm_scope::main);
  CHECK_FALSE(loaded.settings.session.reset.reset);
  CHECK(loaded.settings.compaction.reserve_tokens_floor == 20000);
}

TEST_CASE("config: every key set to a non-default value is read back", "[config]") {
  config_load loaded = load_ok(non_default_config, non_default_environment());
  // maxActiveTranscriptBytes is set together with truncateAfterCompaction: no warning. The
  // deprecated model.* keys are warned about.
  CHECK(loaded.warnings == legacy_model_warnings);
  check_non_default_settings(loaded.settings);
}

TEST_CASE("config: settings_to_json output loads back to equal settings", "[config]") {
  SECTION("a non-default configuration") {
    config_load first = load_ok(non_default_config, non_default_environment());
    std::string shown = json::to_pretty(settings_to_json(first.settings));
    config_load second = load_ok(shown, non_default_environment());
    CHECK(second.warnings == legacy_model_warnings);
    check_non_default_settings(second.settings);
    CHECK(json::to_pretty(settings_to_json(second.settings)) == shown);
    // The layout is the documented one, e.g. the infinite acquire timeout is "Infinity".
    auto json = settings_to_json(first.settings);
    CHECK(json.at("session").at("writeLock").at("acquireTimeoutMs") == "Infinity");
    CHECK(json.at("session").at("identityLinks").as_object().begin()->key() == "zed");
    // Secrets from variables are shown as the variable, never their values.
    CHECK(json.at("models").at("providers").at("work-llm").at("apiKey") == "${WORK_KEY}");
    CHECK(shown.find("wk-123") == std::string::npos);
    CHECK(shown.find("ak-456") == std::string::npos);
    CHECK(json.at("agents").at("defaults").at("models").at("work-llm/small").at("alias") == "fast");
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

TEST_CASE("config: identityLinks keep the file order, so the first listed name wins", "[config]") {
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

TEST_CASE("config: a wrong type or value is an error naming the key path and the reason", "[config]") {
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

TEST_CASE("config: invalid JSON5 names the line and column and a non-object top level is refused", "[config]") {
  status truncated = load_error(R"({"session": {)");
  CHECK(truncated.code() == errc::corrupt);
  CHECK(truncated.message() == "config: invalid JSON5 at line 1, column 14: invalid end of input");
  status missing_comma = load_error("{\n  session: {}\n  gateway: {}\n}");
  CHECK(missing_comma.message() == "config: invalid JSON5 at line 3, column 3: invalid character 'g'");
  status array = load_error("[1, 2]");
  CHECK(array.code() == errc::invalid_argument);
  CHECK(array.message() == "config: the top level must be a JSON object ({...}), got an array");
  CHECK(load_error(R"("stateDir")").message() ==
        R"(config: the top level must be a JSON object ({...}), got "stateDir")");
}

TEST_CASE("config: unknown keys are warned about with the closest known key", "[config]") {
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
                               "unknown config key gateway.prot (did you mean gateway.port?)",  // a swap is one edit
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

TEST_CASE("config: settings that would have no effect are warned about", "[config]") {
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

TEST_CASE("config: agents.defaults.compaction is an alias of compaction", "[config]") {
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
    config_load loaded = load_ok(R"({"agents": {"defaults": {"compaction": {"reserveToken": 1}, "workspace": "x"}}})");
    CHECK(loaded.warnings ==
          std::vector<std::string>{"unknown config key agents.defaults.workspace",
                                   "unknown config key agents.defaults.compaction.reserveToken (did you mean "
                                   "agents.defaults.compaction.reserveTokens?)"});
  }
}

TEST_CASE("config: the environment gives the state dir and overrides the write lock", "[config]") {
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

TEST_CASE("config: byte sizes and durations in their text forms", "[config]") {
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

TEST_CASE("config: typo suggestions need a close key", "[config]") {
  const std::vector<std::string_view> known = {"reset", "resetTriggers", "resetByType", "timezone"};
  CHECK(key_distance("resetTrigger", "resetTriggers") == 1);
  CHECK(key_distance("TimeZone", "timezone") == 0);
  CHECK(closest_key("resetTrigger", known) == "resetTriggers");
  CHECK(closest_key("timeZone", known) == "timezone");
  CHECK(closest_key("rest", known) == "reset");
  CHECK_FALSE(closest_key("maintenance", known));
  CHECK_FALSE(closest_key("zz", known));
}

TEST_CASE("config: load_config_file reads through fs and names the file in errors", "[config]") {
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

// ---- models as OpenClaw configures them (../shared/reference/provider-apis.md) -------------------

namespace {

// provider-apis.md "OpenClaw's model config", as JSON.
constexpr std::string_view openclaw_model_example = R"({
  "agents": {"defaults": {
    "model": {"primary": "local/my-model", "fallbacks": ["anthropic/claude-sonnet-4-6"]},
    "models": {"local/my-model": {"alias": "Local"}}
  }},
  "models": {"mode": "merge", "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:1234/v1", "apiKey": "${LOCAL_KEY}", "api": "openai-completions",
      "headers": {}, "timeoutSeconds": 120,
      "models": [{"id": "my-model", "name": "My model", "reasoning": false, "input": ["text"],
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                  "contextWindow": 196608, "maxTokens": 8192,
                  "compat": {"supportsUsageInStreaming": true, "maxTokensField": "max_tokens"}}]
    }
  }}
})";

bool mentions(const std::vector<std::string>& texts, std::string_view needle) {
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return t.find(needle) != std::string::npos; });
}

}  // namespace

TEST_CASE("config: OpenClaw's model config example loads into the model structs", "[config]") {
  config_load loaded = load_ok(openclaw_model_example, environment({{"LOCAL_KEY", "lk-secret"}}));
  CHECK(loaded.warnings.empty());
  const auto& m = loaded.settings.models;
  REQUIRE(m.providers.size() == 1);
  const auto& local = m.providers[0];
  CHECK(local.id == "local");
  CHECK(local.base_url == "http://127.0.0.1:1234/v1");
  CHECK(local.api_key == "lk-secret");
  CHECK(local.api_key_source == "${LOCAL_KEY}");
  CHECK(local.api == "openai-completions");
  CHECK(local.headers.empty());
  CHECK(local.timeout_seconds == 120);
  REQUIRE(local.models.size() == 1);
  const auto& model = local.models[0];
  CHECK(model.id == "my-model");
  CHECK(model.name == "My model");
  CHECK(model.api.empty());
  CHECK_FALSE(model.reasoning);
  CHECK(model.input == std::vector<std::string>{"text"});
  CHECK(model.cost.input == 0);
  CHECK(model.cost.output == 0);
  CHECK(model.cost.cache_read == 0);
  CHECK(model.cost.cache_write == 0);
  CHECK(model.context_window == 196608);
  CHECK_FALSE(model.context_tokens);
  CHECK(model.effective_window() == 196608);
  CHECK(model.max_tokens == 8192);
  CHECK(model.compat.supports_usage_in_streaming == std::optional<bool>(true));
  CHECK(model.compat.max_tokens_field == "max_tokens");
  CHECK_FALSE(model.compat.supports_developer_role);
  CHECK(model.aliases == std::vector<std::string>{"Local"});
  CHECK(m.defaults.primary == "local/my-model");
  CHECK(m.defaults.fallbacks == std::vector<std::string>{"anthropic/claude-sonnet-4-6"});
  CHECK(m.by_agent.empty());
  // The legacy fields are untouched.
  CHECK(loaded.settings.model.provider.empty());
  CHECK(loaded.settings.models_catalog.empty());
}

TEST_CASE("config: provider and model defaults", "[config]") {
  config_load loaded = load_ok(R"({"models": {"providers": {
      "lan": {"baseUrl": "http://10.0.0.2:8080/v1", "models": [{"id": "qwen"}]},
      "openai": {"models": [{"id": "gpt-4o", "contextTokens": 300000}]}}}})");
  CHECK(loaded.warnings.empty());
  const auto& providers = loaded.settings.models.providers;
  REQUIRE(providers.size() == 2);
  CHECK(providers[0].api == "openai-completions");  // a baseUrl and no api
  CHECK(providers[0].api_key.empty());
  CHECK(providers[0].api_key_source.empty());
  CHECK(providers[0].timeout_seconds == 0);
  const auto& qwen = providers[0].models.at(0);
  CHECK(qwen.context_window == 200000);
  CHECK(qwen.max_tokens == 0);
  CHECK_FALSE(qwen.reasoning);
  CHECK(qwen.input == std::vector<std::string>{"text"});
  CHECK(qwen.name.empty());
  CHECK_FALSE(qwen.compat.supports_usage_in_streaming);
  CHECK(qwen.compat.max_tokens_field.empty());
  // A built-in provider without a baseUrl keeps no api (the runner knows it).
  CHECK(providers[1].api.empty());
  // contextTokens above the window does not widen it.
  CHECK(providers[1].models.at(0).effective_window() == 200000);
  // Nothing picks a default model.
  CHECK(loaded.settings.models.defaults.empty());

  SECTION("a custom provider without a baseUrl is warned about") {
    config_load no_url = load_ok(R"({"models": {"providers": {"lan": {"models": [{"id": "qwen"}]}}}})");
    CHECK(no_url.warnings == std::vector<std::string>{
                                 "config key models.providers.lan: no baseUrl, and \"lan\" is not a provider whose "
                                 "endpoint this build knows (anthropic, google, openai); calls to it will fail"});
  }
}

TEST_CASE("config: apiKey and header values take ${VAR} from the environment", "[config]") {
  SECTION("set: resolved, and the source recorded") {
    config_load loaded = load_ok(
        R"({"models": {"providers": {"openai": {"apiKey": "${OPENAI_API_KEY}",
            "headers": {"Authorization": "Bearer ${GW_TOKEN}", "X-Literal": "$${NOT_A_VAR}", "X-Lower": "${lower}"}},
            "lit": {"baseUrl": "http://h/v1", "apiKey": "sk-literal"}}}})",
        environment({{"OPENAI_API_KEY", "sk-env"}, {"GW_TOKEN", "tok"}}));
    const auto& openai = loaded.settings.models.providers.at(0);
    CHECK(openai.api_key == "sk-env");
    CHECK(openai.api_key_source == "${OPENAI_API_KEY}");
    CHECK(openai.headers == std::vector<std::pair<std::string, std::string>>{
                                {"Authorization", "Bearer tok"}, {"X-Literal", "${NOT_A_VAR}"}, {"X-Lower", "${lower}"}});
    const auto& lit = loaded.settings.models.providers.at(1);
    CHECK(lit.api_key == "sk-literal");
    CHECK(lit.api_key_source == "literal");
  }
  SECTION("unset: an error naming the variable and the provider") {
    status error = load_error(R"({"models": {"providers": {"openai": {"apiKey": "${OPENAI_API_KEY}"}}}})");
    CHECK(error.code() == errc::invalid_argument);
    CHECK(error.message() ==
          "config key models.providers.openai.apiKey: environment variable OPENAI_API_KEY is not set");
    status header = load_error(
        R"({"models": {"providers": {"gw": {"baseUrl": "http://h", "headers": {"Authorization": "Bearer ${GW_TOKEN}"}}}}})");
    CHECK(header.message() ==
          "config key models.providers.gw.headers.Authorization: environment variable GW_TOKEN is not set");
    status empty = load_error(R"({"models": {"providers": {"openai": {"apiKey": "${OPENAI_API_KEY}"}}}})",
                              environment({{"OPENAI_API_KEY", ""}}));
    CHECK(empty.message() == "config key models.providers.openai.apiKey: environment variable OPENAI_API_KEY is empty");
  }
}

TEST_CASE("config: secrets never appear in config show, warnings or errors", "[config]") {
  const std::vector<std::string> secrets = {"sk-live-AAA111", "hdr-BBB222", "goog-CCC333", "tok-DDD444", "env-EEE555"};
  config_load loaded = load_ok(R"({"models": {"providers": {
      "lit": {"baseUrl": "http://h/v1", "apiKey": "sk-live-AAA111", "apiKei": "sk-live-AAA111",
              "headers": {"Authorization": "Bearer hdr-BBB222", "x-goog-api-key": "goog-CCC333",
                          "X-Session-Token": "tok-DDD444", "X-Org": "acme"},
              "api": "ollama"},
      "env": {"baseUrl": "http://h/v1", "apiKey": "${ENV_KEY}", "headers": {"X-Api-Key": "${ENV_KEY}"}}}}})",
                               environment({{"ENV_KEY", "env-EEE555"}}));
  // Warnings there are (a typo of apiKey, an api without a runner), none with a value.
  CHECK(mentions(loaded.warnings, "unknown config key models.providers.lit.apiKei (did you mean "
                                  "models.providers.lit.apiKey?)"));
  CHECK(mentions(loaded.warnings, "this build has no runner for api \"ollama\""));
  std::string shown = json::to_pretty(settings_to_json(loaded.settings));
  for (const auto& secret : secrets) {
    INFO(secret);
    CHECK(shown.find(secret) == std::string::npos);
    for (const auto& warning : loaded.warnings) CHECK(warning.find(secret) == std::string::npos);
  }
  auto json = settings_to_json(loaded.settings);
  const auto& providers = json.at("models").at("providers");
  CHECK(providers.at("lit").at("apiKey") == "<redacted>");
  CHECK(providers.at("lit").at("headers").at("Authorization") == "<redacted>");
  CHECK(providers.at("lit").at("headers").at("x-goog-api-key") == "<redacted>");
  CHECK(providers.at("lit").at("headers").at("X-Session-Token") == "<redacted>");
  CHECK(providers.at("lit").at("headers").at("X-Org") == "acme");
  CHECK(providers.at("env").at("apiKey") == "${ENV_KEY}");
  CHECK(providers.at("env").at("headers").at("X-Api-Key") == "<redacted>");
  // The values themselves are loaded.
  CHECK(loaded.settings.models.providers.at(0).api_key == "sk-live-AAA111");

  // Errors about secret keys say what the value is, not what it says.
  status number = load_error(R"({"models": {"providers": {"p": {"baseUrl": "http://h", "apiKey": 987654321}}}})");
  CHECK(number.message() == "config key models.providers.p.apiKey: expected a string (a literal, or \"${VAR}\" for an "
                            "environment variable), got a number");
  status header = load_error(
      R"({"models": {"providers": {"p": {"baseUrl": "http://h", "headers": {"Authorization": ["Bearer x-9f8e7d"]}}}}})");
  CHECK(header.message().find("x-9f8e7d") == std::string::npos);
  CHECK_THAT(header.message(), Catch::StartsWith("config key models.providers.p.headers.Authorization: "));
}

TEST_CASE("config: model refs are checked at load", "[config]") {
  SECTION("an unknown provider is an error listing the known ones") {
    status error = load_error(R"({"models": {"providers": {"local": {"baseUrl": "http://h", "models": [{"id": "m"}]}}},
        "agents": {"defaults": {"model": {"primary": "local/m", "fallbacks": ["nope/x"]}}}})");
    CHECK(error.code() == errc::invalid_argument);
    CHECK(error.message() == "config key agents.defaults.model.fallbacks[0]: unknown provider \"nope\" in \"nope/x\"; "
                             "known providers: anthropic, google, local, openai");
  }
  SECTION("models.mode replace leaves the built-in providers out") {
    status error = load_error(R"({"models": {"mode": "replace", "providers": {"local": {"baseUrl": "http://h"}}},
        "agents": {"defaults": {"model": "openai/gpt-4o"}}})");
    CHECK(error.message() ==
          "config key agents.defaults.model: unknown provider \"openai\" in \"openai/gpt-4o\"; known providers: local");
    CHECK(load_error(R"({"models": {"mode": "overlay"}})").message() ==
          R"(config key models.mode: expected one of "merge", "replace", got "overlay")");
  }
  SECTION("the legacy model.provider and catalog providers are known") {
    config_load loaded = load_ok(R"({"model": {"provider": "sim"},
        "models": {"catalog": [{"provider": "acme", "id": "a1"}]},
        "agents": {"defaults": {"model": {"primary": "sim/large", "fallbacks": ["acme/a1"]}}}})");
    CHECK(loaded.settings.models.defaults.primary == "sim/large");
  }
  SECTION("neither provider/model nor an alias is an error") {
    CHECK(load_error(R"({"agents": {"list": [{"id": "a", "model": "gpt-4o"}]}})").message() ==
          "config key agents.list[0].model: \"gpt-4o\" is neither \"provider/model\" nor an alias of "
          "agents.defaults.models");
    CHECK(load_error(R"({"agents": {"defaults": {"model": {"primary": "openai/"}}}})").message() ==
          "config key agents.defaults.model.primary: \"openai/\" is neither \"provider/model\" nor an alias of "
          "agents.defaults.models");
    CHECK(load_error(R"({"agents": {"defaults": {"model": 5}}})").message() ==
          R"(config key agents.defaults.model: expected "provider/model" or {"primary": ..., "fallbacks": [...]}, got 5)");
  }
  SECTION("a known provider with an unlisted model is a warning; a built-in one without models is not") {
    config_load loaded = load_ok(R"({"models": {"providers": {"local": {"baseUrl": "http://h", "models": [{"id": "m"}]}}},
        "agents": {"defaults": {"model": {"primary": "LOCAL/M", "fallbacks": ["local/other", "google/gemini-2.5-pro"]}}}})");
    CHECK(loaded.warnings == std::vector<std::string>{
                                 "config key agents.defaults.model.fallbacks[0]: model \"other\" is not listed in "
                                 "models.providers.local.models; it is used with the default limits"});
  }
}

TEST_CASE("config: agents.defaults.models aliases name configured models", "[config]") {
  config_load loaded = load_ok(R"({
      "agents": {"defaults": {"model": "smart", "models": {
          "local/small": {"alias": "quick"}, "openai/gpt-4o": {"alias": "smart"}, "openai/o3": {"alias": "think"}}}},
      "models": {"providers": {"local": {"baseUrl": "http://h", "models": [{"id": "small"}]},
                               "openai": {"models": [{"id": "gpt-4o"}]}}}})");
  const auto& providers = loaded.settings.models.providers;
  CHECK(providers.at(0).models.at(0).aliases == std::vector<std::string>{"quick"});
  CHECK(providers.at(1).models.at(0).aliases == std::vector<std::string>{"smart"});
  CHECK(loaded.settings.models.defaults.primary == "smart");  // an alias is a valid ref, kept as written
  // openai/o3 is not configured: its alias is dropped with a warning.
  CHECK(loaded.warnings == std::vector<std::string>{"config key agents.defaults.models[\"openai/o3\"].alias: "
                                                    "\"openai/o3\" names no model of models.providers; the alias "
                                                    "\"think\" is not used"});
  // ... so it is no ref.
  CHECK_THAT(load_error(R"({"agents": {"defaults": {"model": "think", "models": {"openai/o3": {"alias": "think"}}}}})")
                 .message(),
             Catch::StartsWith("config key agents.defaults.model: \"think\" is neither"));
  // One alias, one model (the legacy catalog's aliases included).
  status twice = load_error(R"({
      "agents": {"defaults": {"models": {"local/a": {"alias": "fast"}, "local/b": {"alias": "FAST"}}}},
      "models": {"providers": {"local": {"baseUrl": "http://h", "models": [{"id": "a"}, {"id": "b"}]}}}})");
  CHECK(twice.message() == "config key agents.defaults.models[\"local/b\"].alias: \"fast\" is already used at "
                           "agents.defaults.models[\"local/a\"].alias");
  status with_catalog = load_error(R"({
      "agents": {"defaults": {"models": {"local/a": {"alias": "4o"}}}},
      "models": {"catalog": [{"provider": "openai", "id": "gpt-4o", "aliases": ["4o"]}],
                 "providers": {"local": {"baseUrl": "http://h", "models": [{"id": "a"}]}}}})");
  CHECK(with_catalog.message() ==
        "config key agents.defaults.models[\"local/a\"].alias: \"4o\" is already used at models.catalog[0].aliases[0]");
  CHECK(load_error(R"({"agents": {"defaults": {"models": {"local/a": {"alias": "two words"}}}},
      "models": {"providers": {"local": {"baseUrl": "http://h", "models": [{"id": "a"}]}}}})")
            .message() == "config key agents.defaults.models[\"local/a\"].alias: an alias must be one word (it is "
                          "matched as the first word after /new)");
}

TEST_CASE("config: per-agent models and system prompts, as text or read from a file", "[config]") {
  testing::temp_dir dir;
  testing::write_text(dir.file("main.md"), "You are the main agent.\n");
  testing::write_text(dir.file("ops.md"), "You run operations.");
  const std::string config = dir.file("sessionrt.json");
  testing::write_text(config, R"({
      "agents": {
        "defaults": {"systemPrompt": {"file": "main.md"}, "model": "openai/gpt-4o"},
        "list": [{"id": "main", "default": true},
                 {"id": "Ops Team", "systemPrompt": {"file": ")" + dir.file("ops.md") + R"("},
                  "model": {"primary": "anthropic/claude-sonnet-4-6", "fallbacks": ["openai/gpt-4o"]}},
                 {"id": "chat", "systemPrompt": "Chat casually."}]
      }})");
  auto loaded = load_config_file(storage::posix_fs(), config, no_environment());
  if (!loaded.ok()) FAIL(loaded.error().to_string());
  const auto& s = loaded->settings;
  CHECK(loaded->warnings.empty());
  CHECK(s.prompts.defaults == "You are the main agent.\n");  // relative to the config file's directory
  CHECK(s.prompts.by_agent == std::map<std::string, std::string>{{"ops-team", "You run operations."},
                                                                 {"chat", "Chat casually."}});
  CHECK(s.models.defaults.primary == "openai/gpt-4o");
  REQUIRE(s.models.by_agent.size() == 1);
  CHECK(s.models.by_agent.at("ops-team").primary == "anthropic/claude-sonnet-4-6");
  CHECK(s.models.by_agent.at("ops-team").fallbacks == std::vector<std::string>{"openai/gpt-4o"});
  // config show writes the prompt text, which loads back to the same settings.
  auto json = settings_to_json(s);
  CHECK(json.at("agents").at("defaults").at("systemPrompt") == "You are the main agent.\n");
  CHECK(json.at("agents").at("list").at(1).at("systemPrompt") == "You run operations.");
  CHECK(json.at("agents").at("list").at(1).at("model").at("primary") == "anthropic/claude-sonnet-4-6");
  config_load again = load_ok(json::to_compact(json));
  CHECK(again.settings.prompts.by_agent == s.prompts.by_agent);
  CHECK(again.settings.models.by_agent.at("ops-team").fallbacks == std::vector<std::string>{"openai/gpt-4o"});

  SECTION("\"~/\" is the home directory") {
    auto home = load_config_text(R"({"agents": {"defaults": {"systemPrompt": {"file": "~/ops.md"}}}})",
                                 environment({{"HOME", dir.file("")}}), storage::posix_fs(), "/nonexistent");
    REQUIRE(home.ok());
    CHECK(home->settings.prompts.defaults == "You run operations.");
  }
  SECTION("a missing file is an error naming the key and the path") {
    testing::write_text(config, R"({"agents": {"list": [{"id": "a", "systemPrompt": {"file": "prompts/missing.md"}}]}})");
    auto missing = load_config_file(storage::posix_fs(), config, no_environment());
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code() == errc::invalid_argument);
    CHECK_THAT(missing.error().message(),
               Catch::StartsWith(config + ": config key agents.list[0].systemPrompt.file: cannot read "
                                          "\"prompts/missing.md\": "));
    CHECK_THAT(missing.error().message(), Catch::Contains(dir.file("prompts/missing.md")));
  }
  SECTION("a prompt object without a file, or of another type, is an error") {
    CHECK(load_error(R"({"agents": {"defaults": {"systemPrompt": {"path": "x.md"}}}})").message() ==
          "config key agents.defaults.systemPrompt.file: is required (a path, relative to the config file's directory)");
    CHECK(load_error(R"({"agents": {"defaults": {"systemPrompt": 3}}})").message() ==
          R"(config key agents.defaults.systemPrompt: expected a string or {"file": "path"}, got 3)");
  }
}

TEST_CASE("config: the legacy model keys still apply, with a warning naming the new key", "[config]") {
  config_load loaded = load_ok(R"({
      "model": {"provider": "openai", "model": "gpt-4o", "contextWindow": 128000, "maxTokens": 4096,
                "api": "openai-responses", "maxConcurrent": 4},
      "models": {"catalog": [{"provider": "openai", "id": "gpt-4o-mini", "aliases": ["mini"], "contextWindow": 128000}]}})");
  const auto& s = loaded.settings;
  CHECK(s.model.provider == "openai");
  CHECK(s.model.model == "gpt-4o");
  CHECK(s.model.context_window == 128000);
  CHECK(s.model.max_tokens == 4096);
  CHECK(s.model.api == "openai-responses");
  CHECK(s.model.max_concurrent == 4);
  REQUIRE(s.models_catalog.size() == 1);
  CHECK(s.models_catalog[0].id == "gpt-4o-mini");
  CHECK(s.models_catalog[0].aliases == std::vector<std::string>{"mini"});
  // No agents.defaults.model: the legacy pair is the primary.
  CHECK(s.models.defaults.primary == "openai/gpt-4o");
  CHECK(loaded.warnings ==
        std::vector<std::string>{
            "config key model.provider is deprecated: set agents.defaults.model (\"provider/model\")",
            "config key model.model is deprecated: set agents.defaults.model (\"provider/model\")",
            "config key model.contextWindow is deprecated: set models.providers.<id>.models[].contextWindow",
            "config key model.maxTokens is deprecated: set models.providers.<id>.models[].maxTokens",
            "config key model.api is deprecated: set models.providers.<id>.api",
            "config key models.catalog is deprecated: list the models under models.providers.<id>.models[] and "
            "name them with agents.defaults.models.<ref>.alias",
        });
  // A catalog alias is a ref.
  CHECK(load_ok(R"({"models": {"catalog": [{"provider": "openai", "id": "gpt-4o-mini", "aliases": ["mini"]}]},
                    "agents": {"defaults": {"model": "mini"}}})")
            .settings.models.defaults.primary == "mini");

  SECTION("agents.defaults.model wins over the legacy pair") {
    config_load both = load_ok(R"({"model": {"provider": "openai", "model": "gpt-4o"},
                                   "agents": {"defaults": {"model": "anthropic/claude-sonnet-4-6"}}})");
    CHECK(both.settings.models.defaults.primary == "anthropic/claude-sonnet-4-6");
    CHECK(both.settings.model.provider == "openai");  // still filled for the code that reads it
  }
  SECTION("no warning for keys not in the file, nor for the model.* keys that are not deprecated") {
    config_load current = load_ok(R"({"model": {"maxConcurrent": 2, "timeoutMs": "5m", "syncRunnerThreads": 2,
                                                "imageMaxDimensionPx": 800, "maxConcurrentByProvider": {"openai": 1}}})");
    CHECK(current.warnings.empty());
    // ... and config show writes none of the deprecated keys at their defaults.
    auto json = settings_to_json(current.settings);
    CHECK_FALSE(json.at("model").as_object().contains("contextWindow"));
    CHECK_FALSE(json.at("model").as_object().contains("provider"));
    CHECK_FALSE(json.at("models").as_object().contains("catalog"));
    CHECK(load_ok(json::to_compact(json)).warnings.empty());
  }
}

TEST_CASE("config: maxToolIterations, retry, api names, compat and input values", "[config]") {
  config_load loaded = load_ok(R"({"agents": {"defaults": {"maxToolIterations": 50}},
      "models": {"retry": {"maxDelayMs": 5000, "maxAttempts": 10}}})");
  CHECK(loaded.settings.models.max_tool_iterations == 50);
  CHECK(loaded.settings.models.retry_max_delay_ms == 5000);
  CHECK(loaded.settings.models.retry_max_attempts == 10);

  config_load other_api = load_ok(R"({"models": {"providers": {"az": {"baseUrl": "http://h",
      "models": [{"id": "m", "api": "azure-openai-responses", "compat": {"thinkingFormat": "qwen"}}]}}}})");
  CHECK(other_api.settings.models.providers.at(0).models.at(0).api == "azure-openai-responses");
  CHECK(other_api.warnings ==
        std::vector<std::string>{
            "config key models.providers.az.models[0].api: this build has no runner for api \"azure-openai-responses\" "
            "(it runs openai-completions, openai-responses, anthropic-messages and google-generative-ai); calls to it "
            "will fail",
            "unknown config key models.providers.az.models[0].compat.thinkingFormat"});

  struct bad_config {
    std::string text;
    std::string message;
  };
  const std::vector<bad_config> cases = {
      {R"({"agents": {"defaults": {"maxToolIterations": 0}}})",
       "config key agents.defaults.maxToolIterations: expected a whole number from 1 to 10000, got 0"},
      {R"({"models": {"retry": {"maxAttempts": 0}}})",
       "config key models.retry.maxAttempts: expected a whole number from 1 to 100, got 0"},
      {R"({"models": {"retry": {"maxDelayMs": "soon"}}})",
       R"(config key models.retry.maxDelayMs: expected a duration (whole milliseconds, or a string such as "30s", "10m", "24h", "7d"), got "soon")"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "api": "openai-chat"}}}})",
       R"(config key models.providers.p.api: expected one of "openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", got "openai-chat")"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"name": "x"}]}}}})",
       R"(config key models.providers.p.models[0].id: is required (the id the API knows, e.g. "gpt-4o"))"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "m"}, {"id": "M"}]}}}})",
       R"(config key models.providers.p.models[1].id: model "M" is already listed at models.providers.p.models[0].id)"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "m", "input": ["text", "audio"]}]}}}})",
       R"(config key models.providers.p.models[0].input[1]: expected "text" or "image", got "audio")"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "m", "compat": {"maxTokensField": "max"}}]}}}})",
       R"(config key models.providers.p.models[0].compat.maxTokensField: expected one of "max_tokens", "max_completion_tokens", got "max")"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "m", "cost": {"input": -1}}]}}}})",
       "config key models.providers.p.models[0].cost.input: expected a number >= 0, got -1"},
      {R"({"models": {"providers": {"p": {"baseUrl": "http://h", "models": [{"id": "m", "contextWindow": 0}]}}}})",
       "config key models.providers.p.models[0].contextWindow: expected a whole number >= 1, got 0"},
      {R"({"models": {"providers": {"a/b": {"baseUrl": "http://h"}}}})",
       R"(config key models.providers["a/b"]: a provider id must be one word without "/" (model refs are "provider/model"))"},
      {R"({"models": {"providers": {"local": {"baseUrl": "http://h"}, "Local": {"baseUrl": "http://h"}}}})",
       "config key models.providers.Local: names the same provider as models.providers.local (provider ids are "
       "compared ignoring case)"},
  };
  for (const auto& c : cases) {
    status error = load_error(c.text);
    INFO(c.text);
    CHECK(error.code() == errc::invalid_argument);
    CHECK(error.message() == c.message);
  }
}

TEST_CASE("config: compaction.model names the model that writes summaries", "[config]") {
  auto s = load_ok(R"({"compaction": {"model": "ollama/qwen3:8b"}})").settings;
  CHECK(s.compaction_model == "ollama/qwen3:8b");
  CHECK(load_ok("{}").settings.compaction_model.empty());
  auto shown = settings_to_json(s);
  CHECK(shown.at("compaction").at("model") == "ollama/qwen3:8b");
}

TEST_CASE("config: an OpenClaw config as its docs write it loads, its unused keys in one line", "[config]") {
  config_load loaded = load_ok(R"(// ~/.openclaw/openclaw.json
{
  agents: {
    defaults: {
      model: { primary: 'anthropic/claude-sonnet-4-6' },  // the default model
      workspace: '~/.openclaw/workspace',
    },
  },
  session: { dmScope: 'per-channel-peer', reset: { mode: 'daily', atHour: 4, }, },
  channels: { telegram: { enabled: true, botToken: '${TG_TOKEN}' } },
  plugins: { entries: {} },
  tools: { profile: 'coding' },
  browser: { enabled: false },
  ui: { seamColor: '#FF4500' },
  gateway: { port: 18789, mode: 'local', },
})");
  CHECK(loaded.settings.routing.session.direct_message_scope == actors::dm_scope::per_channel_peer);
  REQUIRE(loaded.settings.session.reset.reset);
  CHECK(loaded.settings.session.reset.reset->at_hour == std::optional<double>(4));
  CHECK(loaded.settings.gateway.port == 18789);
  // One line for the keys sessionrt does not use, not one each; the count and the first five.
  std::size_t summaries = 0;
  for (const auto& w : loaded.warnings) {
    CHECK(w.find("unknown config key") == std::string::npos);
    if (w.find("config keys sessionrt does not use are ignored") != std::string::npos) {
      ++summaries;
      CHECK_THAT(w, Catch::StartsWith("7 config keys sessionrt does not use are ignored: "
                                      "agents.defaults.workspace, channels, plugins, tools, browser, ..."));
    }
  }
  CHECK(summaries == 1);
}

TEST_CASE("config: one rule finds a command's config - --config, SESSIONRT_CONFIG, OPENCLAW_CONFIG_PATH, --openclaw", "[config]") {
  testing::temp_dir dir;
  const std::string oc = dir.path() + "/oc";
  std::filesystem::create_directories(oc);
  testing::write_text(oc + "/openclaw.json", "{ gateway: { port: 19001 } }  // OpenClaw's own file");
  testing::write_text(dir.path() + "/mine.json5", "{ gateway: { port: 19002 } }");
  testing::write_text(dir.path() + "/env.json5", "{ gateway: { port: 19003 } }");
  std::map<std::string, std::string> vars{{"HOME", dir.path()}};
  auto env = [&vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto port_of = [&](const std::string& flag, bool openclaw) {
    auto l = load_command_config(storage::posix_fs(), flag, env, openclaw);
    REQUIRE(l.ok());
    return l->settings.gateway.port;
  };
  CHECK(port_of("", false) == 18789);  // nothing: the defaults
  vars["OPENCLAW_CONFIG_PATH"] = oc + "/openclaw.json";
  CHECK(port_of("", false) == 19001);  // OpenClaw's variable, after sessionrt's own
  vars["SESSIONRT_CONFIG"] = dir.path() + "/env.json5";
  CHECK(port_of("", false) == 19003);
  CHECK(port_of(dir.path() + "/mine.json5", false) == 19002);  // --config wins
  // --openclaw: OpenClaw's config and state dir, whatever sessionrt's own variables say.
  vars.erase("OPENCLAW_CONFIG_PATH");
  vars["OPENCLAW_STATE_DIR"] = oc;
  vars["SESSIONRT_STATE_DIR"] = dir.path() + "/srt";
  auto l = load_command_config(storage::posix_fs(), "", env, true);
  REQUIRE(l.ok());
  CHECK(l->path == oc + "/openclaw.json");
  CHECK(l->settings.gateway.port == 19001);
  CHECK(l->settings.state_dir == oc);
  vars.erase("OPENCLAW_STATE_DIR");
  auto home = load_command_config(storage::posix_fs(), "", env, true);
  REQUIRE(home.ok());
  CHECK(home->settings.state_dir == dir.path() + "/.openclaw");
  CHECK(home->path == dir.path() + "/env.json5");  // no ~/.openclaw/openclaw.json: the next in line
  auto missing = load_command_config(storage::posix_fs(), dir.path() + "/nope.json", env);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message(), Catch::Contains("nope.json"));
}
