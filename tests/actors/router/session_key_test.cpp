// Expectations come from ../shared/reference/openclaw-sessions.md: the key grammar table
// [R§1.1], the normalization rules [R§1.2], synthetic/protected keys [R§5.2], cron run keys
// [R§1.1, §5.6] and the reset type derivation [R§4.1].
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "actors/router/session_key.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

struct key_case {
  const char* rule;
  std::string got;
  std::string expected;
};

void check_table(const std::vector<key_case>& table) {
  for (const key_case& row : table) {
    INFO(row.rule);
    CHECK(row.got == row.expected);
  }
}

session_entry entry_from(const char* json_text) {
  return session_entry(boost::json::parse(json_text).as_object());
}

std::string peer_key(std::string_view channel, std::string_view kind, std::string_view id,
                     dm_scope scope, const identity_links* links = nullptr,
                     std::string_view account = "") {
  return build_peer_key({.agent_id = "main",
                         .channel = channel,
                         .account_id = account,
                         .peer_kind = kind,
                         .peer_id = id,
                         .scope = scope,
                         .links = links});
}

}  // namespace

TEST_CASE("every key form of the grammar table [R§1.1]") {
  using enum dm_scope;
  check_table({
      {"main: agent:<a>:<mainKey>, default giving agent:main:main", build_main_key("main", ""),
       "agent:main:main"},
      {"main: mainKey is lowercased", build_main_key("main", "Work"), "agent:main:work"},
      {"DM per-peer", peer_key("telegram", "direct", "123", per_peer), "agent:main:direct:123"},
      {"DM per-channel-peer", peer_key("telegram", "direct", "123", per_channel_peer),
       "agent:main:telegram:direct:123"},
      {"DM per-account-channel-peer",
       peer_key("telegram", "direct", "123", per_account_channel_peer, nullptr, "Bot1"),
       "agent:main:telegram:bot1:direct:123"},
      {"DM per-account-channel-peer, empty account -> default",
       peer_key("telegram", "direct", "123", per_account_channel_peer),
       "agent:main:telegram:default:direct:123"},
      {"DM under dmScope main is the main key", peer_key("telegram", "direct", "123", main),
       "agent:main:main"},
      {"DM with a missing peer is the main key", peer_key("telegram", "direct", "", per_peer),
       "agent:main:main"},
      {"DM: empty channel -> unknown", peer_key("", "direct", "123", per_channel_peer),
       "agent:main:unknown:direct:123"},
      {"DM: peer kind dm means direct", peer_key("telegram", "dm", "123", per_peer),
       "agent:main:direct:123"},
      {"group", peer_key("telegram", "group", "-100123", main),
       "agent:main:telegram:group:-100123"},
      {"channel", peer_key("discord", "channel", "987", main), "agent:main:discord:channel:987"},
      {"room passes through", peer_key("irc", "room", "lobby", main), "agent:main:irc:room:lobby"},
      {"group with empty id -> unknown", peer_key("telegram", "group", "", main),
       "agent:main:telegram:group:unknown"},
      {"thread suffix, id lowercased",
       build_thread_key("agent:main:slack:channel:c123", "1700000000.ABC"),
       "agent:main:slack:channel:c123:thread:1700000000.abc"},
      {"thread: no id keeps the base", build_thread_key("agent:main:slack:channel:c123", " "),
       "agent:main:slack:channel:c123"},
      {"Telegram forum topic", build_telegram_topic_key("main", "-100123", "42"),
       "agent:main:telegram:group:-100123:topic:42"},
      {"cron request key", build_cron_request_key("job1"), "cron:job1"},
      {"cron base from request key", to_agent_store_key("main", "cron:job1"),
       "agent:main:cron:job1"},
      {"cron base builder", build_cron_key("ops", "job1"), "agent:ops:cron:job1"},
      {"cron isolated run", build_cron_run_key("main", "job1", "sess-1"),
       "agent:main:cron:job1:run:sess-1"},
      {"webhook request key", build_hook_request_key("u-1"), "hook:u-1"},
      {"webhook stored as agent:<a>:hook:<uuid>", build_hook_key("ops", "u-1"),
       "agent:ops:hook:u-1"},
      {"sub-agent", build_subagent_key("Worker", "u-1"), "agent:worker:subagent:u-1"},
      {"ACP", build_acp_key("main", "u-1"), "agent:main:acp:u-1"},
      {"isolated heartbeat", build_heartbeat_key("agent:main:main"), "agent:main:main:heartbeat"},
      {"model-run probe", build_model_run_key("main", "u-1"), "agent:main:explicit:model-run-u-1"},
      {"global sentinel", std::string(global_session_key), "global"},
      {"unknown sentinel", std::string(unknown_session_key), "unknown"},
  });
}

TEST_CASE("normalizeAgentId, normalizeAccountId, normalizeMainKey [R§1.2]") {
  check_table({
      {"agent: empty -> main", normalize_agent_id(""), "main"},
      {"agent: blank -> main", normalize_agent_id("   "), "main"},
      {"agent: valid id is lowercased", normalize_agent_id("Ops"), "ops"},
      {"agent: trimmed", normalize_agent_id("  ops  "), "ops"},
      {"agent: invalid chars -> one dash per run", normalize_agent_id("My  Agent!"), "my-agent"},
      {"agent: leading/trailing dashes stripped", normalize_agent_id("--x--"), "x"},
      {"agent: nothing left -> main", normalize_agent_id("!!!"), "main"},
      {"agent: 64 chars is valid", normalize_agent_id(std::string(64, 'a')), std::string(64, 'a')},
      {"agent: >64 chars truncated to 64", normalize_agent_id(std::string(65, 'A')),
       std::string(64, 'a')},
      {"agent: underscore first is not valid but survives the fallback", normalize_agent_id("_x"),
       "_x"},
      {"agent: non-ASCII letters are invalid chars", normalize_agent_id("Ünïcode"), "n-code"},
      {"account: empty -> default", normalize_account_id(""), "default"},
      {"account: blank -> default", normalize_account_id("  "), "default"},
      {"account: lowercased", normalize_account_id("Bot1"), "bot1"},
      {"account: invalid chars -> dash", normalize_account_id("Work Bot"), "work-bot"},
      {"account: nothing left -> default", normalize_account_id("***"), "default"},
      {"account: max 64 chars", normalize_account_id(std::string(70, 'b')), std::string(64, 'b')},
      {"mainKey: empty -> main", normalize_main_key(""), "main"},
      {"mainKey: trimmed and lowercased", normalize_main_key(" Work "), "work"},
      {"mainKey: JavaScript lowercasing", normalize_main_key("ÄRGER"), "ärger"},
  });
}

TEST_CASE("chat type normalization: dm -> direct [R§1.2]") {
  CHECK(normalize_chat_type("dm") == "direct");
  CHECK(normalize_chat_type("DM") == "direct");
  CHECK(normalize_chat_type("direct") == "direct");
  CHECK(normalize_chat_type(" Group ") == "group");
  CHECK(normalize_chat_type("channel") == "channel");
  CHECK_FALSE(normalize_chat_type("room"));
  CHECK_FALSE(normalize_chat_type(""));
}

TEST_CASE("case-preserving peers keep their opaque ids, everything else is lowercased") {
  check_table({
      {"plain key lowercased", normalize_session_key("Agent:Main:Telegram:Direct:ABC"),
       "agent:main:telegram:direct:abc"},
      {"key trimmed", normalize_session_key("  agent:main:main  "), "agent:main:main"},
      {"signal group id segment keeps case",
       normalize_session_key("Agent:Main:Signal:Group:AbC+/="), "agent:main:signal:group:AbC+/="},
      {"signal group: only the id segment",
       normalize_session_key("agent:main:signal:group:AbC:Thread:XyZ"),
       "agent:main:signal:group:AbC:thread:xyz"},
      {"signal direct ids are lowercased", normalize_session_key("agent:main:signal:direct:AbC"),
       "agent:main:signal:direct:abc"},
      {"matrix channel: whole tail keeps case",
       normalize_session_key("Agent:Main:Matrix:Channel:!RoomId:Example.org"),
       "agent:main:matrix:channel:!RoomId:Example.org"},
      {"matrix group: :thread: found case-insensitively, ids keep case",
       normalize_session_key("agent:main:matrix:group:!Room:Srv:THREAD:$EvT"),
       "agent:main:matrix:group:!Room:Srv:thread:$EvT"},
      {"matrix direct is not case-preserving",
       normalize_session_key("agent:main:matrix:direct:@User:Srv"),
       "agent:main:matrix:direct:@user:srv"},
      {"peer id: signal group", normalize_session_peer_id("signal", "group", " AbC= "), "AbC="},
      {"peer id: signal direct", normalize_session_peer_id("signal", "direct", "AbC"), "abc"},
      {"peer id: matrix channel",
       normalize_session_peer_id("Matrix", "channel", "!Room:Example.org"), "!Room:Example.org"},
      {"peer id: slack channel", normalize_session_peer_id("slack", "channel", "C123"), "c123"},
      {"group key builder keeps a signal group id",
       peer_key("signal", "group", "AbC=", dm_scope::main), "agent:main:signal:group:AbC="},
      {"group key builder keeps a matrix room id",
       peer_key("matrix", "channel", "!Room:Example.org", dm_scope::main),
       "agent:main:matrix:channel:!Room:Example.org"},
  });
  CHECK(is_case_preserving_peer("signal", "group"));
  CHECK(is_case_preserving_peer("matrix", "channel"));
  CHECK(is_case_preserving_peer("matrix", "group"));
  CHECK_FALSE(is_case_preserving_peer("signal", "channel"));
  CHECK_FALSE(is_case_preserving_peer("matrix", "direct"));
}

TEST_CASE("parseAgentSessionKey splits agent:<id>:<rest>") {
  auto parsed = parse_agent_session_key("Agent:Ops:Telegram:Direct:1");
  REQUIRE(parsed);
  CHECK(parsed->agent_id == "ops");
  CHECK(parsed->rest == "telegram:direct:1");
  CHECK_FALSE(parse_agent_session_key("agent:main"));
  CHECK_FALSE(parse_agent_session_key("main"));
  CHECK_FALSE(parse_agent_session_key("hook:abc"));
  CHECK_FALSE(parse_agent_session_key("global"));
}

TEST_CASE("identity links: only outside dmScope main, channel:peer candidates, insertion order") {
  using enum dm_scope;
  const identity_links alice = {{"Alice", {"telegram:123", "discord:987"}}};
  const identity_links bare = {{"bob", {"555"}}};
  const identity_links mixed_case_id = {{"carol", {" Telegram:ABC "}}};
  const identity_links first_wins = {{"first", {"telegram:1"}}, {"second", {"telegram:1"}}};
  const identity_links second_first = {{"second", {"telegram:1"}}, {"first", {"telegram:1"}}};
  const identity_links blank_name = {{"  ", {"telegram:1"}}, {"real", {"telegram:1"}}};
  check_table({
      {"telegram id -> canonical name, lowercased",
       peer_key("telegram", "direct", "123", per_peer, &alice), "agent:main:direct:alice"},
      {"discord id -> the same person", peer_key("discord", "direct", "987", per_peer, &alice),
       "agent:main:direct:alice"},
      {"per-channel-peer keeps the channel",
       peer_key("telegram", "direct", "123", per_channel_peer, &alice),
       "agent:main:telegram:direct:alice"},
      {"dmScope main ignores links", peer_key("telegram", "direct", "123", main, &alice),
       "agent:main:main"},
      {"unlinked id unchanged", peer_key("telegram", "direct", "999", per_peer, &alice),
       "agent:main:direct:999"},
      {"channel must match for channel:peer ids",
       peer_key("discord", "direct", "123", per_peer, &alice), "agent:main:direct:123"},
      {"bare id matches on any channel", peer_key("signal", "direct", "555", per_peer, &bare),
       "agent:main:direct:bob"},
      {"ids compared trimmed and lowercased",
       peer_key("TELEGRAM", "direct", "abc", per_peer, &mixed_case_id), "agent:main:direct:carol"},
      {"first canonical name in insertion order wins",
       peer_key("telegram", "direct", "1", per_peer, &first_wins), "agent:main:direct:first"},
      {"order is insertion order, not alphabetical",
       peer_key("telegram", "direct", "1", per_peer, &second_first), "agent:main:direct:second"},
      {"blank canonical names are skipped",
       peer_key("telegram", "direct", "1", per_peer, &blank_name), "agent:main:direct:real"},
  });
  CHECK(resolve_linked_peer_id(alice, "telegram", "123") == "Alice");  // as written
}

TEST_CASE("main aliases map to agent:<aid>:<mainKey>, or global under scope global") {
  const std::vector<std::string> aliases = {
      "main", "work", "agent:ops:work", "agent:ops:main", "agent:main:work", "agent:main:main"};
  for (const std::string& alias : aliases) {
    INFO(alias);
    CHECK(canonicalize_main_alias(alias, "ops", "Work", session_scope::per_sender) ==
          "agent:ops:work");
    CHECK(canonicalize_main_alias(alias, "ops", "Work", session_scope::global) == "global");
  }
  CHECK(canonicalize_main_alias("agent:ops:direct:1", "ops", "Work", session_scope::per_sender) ==
        "agent:ops:direct:1");
  CHECK(canonicalize_main_alias("agent:ops:direct:1", "ops", "Work", session_scope::global) ==
        "agent:ops:direct:1");
  CHECK(canonicalize_main_alias("main", "main", "", session_scope::per_sender) ==
        "agent:main:main");
}

TEST_CASE("synthetic keys [R§5.2]") {
  for (const char* key :
       {"agent:main:subagent:u1", "agent:main:acp:u1", "agent:main:cron:job1",
        "agent:main:cron:job1:run:s1", "agent:main:acp-bridge:x", "agent:main:hook:u1",
        "agent:main:node:n1", "agent:main:heartbeat", "agent:main:main:heartbeat",
        "agent:main:telegram:group:1:heartbeat:x", "subagent:u1", "hook:u1"}) {
    INFO(key);
    CHECK(is_synthetic_key(key));
  }
  for (const char* key : {"agent:main:main", "agent:main:telegram:direct:1",
                          "agent:main:discord:channel:c1", "global"}) {
    INFO(key);
    CHECK_FALSE(is_synthetic_key(key));
  }
}

// OpenClaw 2026.9's rule (protected_key.hpp; its own cases in tests/actors/maintenance/protected_key_test.cpp).
TEST_CASE("protected keys: the main key, threads, topics, external conversations, groups, channels, group-ish chat types") {
  for (const char* key :
       {"agent:main:slack:channel:c1:thread:t1", "agent:main:main:thread:t1",
        "agent:main:telegram:group:-100:topic:5", "agent:main:telegram:direct:42:topic:5",
        "agent:main:telegram:dm:42:topic:5", "agent:main:discord:group:g1",
        "agent:main:discord:channel:c1", "agent:main:main", "agent:main:telegram:direct:1", "agent:main:direct:1",
        "agent:main:telegram:direct:42:topic:"}) {
    INFO(key);
    CHECK(is_protected_key(key, nullptr));
  }
  for (const char* key : {"agent:main:cron:job1:thread:t1", "agent:main:hook:u1", "agent:main:custom",
                          "agent:main:dashboard:d1"}) {
    INFO(key);
    CHECK_FALSE(is_protected_key(key, nullptr));
  }
  const session_entry group_row = entry_from(R"({"chatType":"group"})");
  const session_entry origin_thread = entry_from(R"({"origin":{"chatType":"thread"}})");
  const session_entry channel_upper = entry_from(R"({"chatType":"Channel"})");
  const session_entry direct_row =
      entry_from(R"({"chatType":"direct","origin":{"chatType":"group"}})");
  CHECK(is_protected_key("agent:main:custom", &group_row));
  // 2026.9 migrates a JSON-era origin.chatType only when direct, group or channel.
  CHECK_FALSE(is_protected_key("agent:main:custom", &origin_thread));
  CHECK(is_protected_key("agent:main:custom", &channel_upper));
  CHECK_FALSE(is_protected_key("agent:main:custom", &direct_row));  // chatType ?? origin
  CHECK_FALSE(is_protected_key("agent:main:hook:u1", &group_row));  // synthetic wins
}

TEST_CASE("cron run keys: rest matches ^cron:[^:]+:run:[^:]+(?::|$)") {
  CHECK(is_cron_run_key("agent:main:cron:job1:run:abc"));
  CHECK(is_cron_run_key("agent:main:cron:job1:run:abc:extra"));
  CHECK(is_cron_run_key("AGENT:Main:Cron:Job1:Run:ABC"));
  CHECK_FALSE(is_cron_run_key("agent:main:cron:job1"));
  CHECK_FALSE(is_cron_run_key("agent:main:cron:job1:run"));
  CHECK_FALSE(is_cron_run_key("agent:main:cron:job1:runs:abc"));
  CHECK_FALSE(is_cron_run_key("agent:main:hook:job1:run:abc"));
  CHECK_FALSE(is_cron_run_key("cron:job1:run:abc"));  // rest of an agent key only
}

TEST_CASE("thread and group classification, reset type [R§4.1]") {
  CHECK(is_thread_key("agent:main:slack:channel:c1:thread:t1"));
  CHECK(is_thread_key("agent:main:slack:channel:c1:Thread:T1"));
  CHECK_FALSE(is_thread_key("agent:main:slack:channel:c1"));
  CHECK(is_group_key("agent:main:telegram:group:-1"));
  CHECK(is_group_key("agent:main:discord:channel:c1"));
  CHECK_FALSE(is_group_key("agent:main:telegram:direct:1"));
  CHECK(reset_type_of("agent:main:slack:channel:c1:thread:t1", false) == "thread");
  CHECK(reset_type_of("agent:main:telegram:direct:1", true) == "thread");
  CHECK(reset_type_of("agent:main:telegram:group:-1", false) == "group");
  CHECK(reset_type_of("agent:main:discord:channel:c1", false) == "group");
  CHECK(reset_type_of("agent:main:main", false, true) == "group");
  CHECK(reset_type_of("agent:main:main", false) == "direct");
  CHECK(reset_type_of("agent:main:telegram:direct:1", false) == "direct");
}

TEST_CASE("keys from outside are validated before use") {
  for (const char* key :
       {"agent:main:main", "agent:main:signal:group:AbC+/=", "hook:8f0c", "global"}) {
    INFO(key);
    CHECK(is_plausible_session_key(key));
  }
  for (const std::string& key :
       {std::string(), std::string("   "), std::string(513, 'a'), std::string("agent:main:\n"),
        std::string("agent:\x7f"), std::string("agent:main:\0x", 12), std::string("../etc/passwd"),
        std::string("agent:main:a/../b"), std::string("/etc/passwd"), std::string("a//b"),
        std::string("a\\b"), std::string("agent:\xff")}) {
    INFO(key);
    CHECK_FALSE(is_plausible_session_key(key));
  }
  CHECK(is_plausible_session_key(std::string(512, 'a')));
}

TEST_CASE("store lookup: other keys normalizing to the lookup key are legacy aliases") {
  const session_entry old_row = entry_from(R"({"sessionId":"s-old","updatedAt":100})");
  const session_entry new_row = entry_from(R"({"sessionId":"s-new","updatedAt":200})");
  const session_entry other = entry_from(R"({"sessionId":"s-x","updatedAt":999})");

  SECTION("the freshest alias wins and every alias is deleted on the next write") {
    auto found = resolve_store_entry("agent:main:telegram:direct:123",
                                     {{"agent:main:telegram:direct:123", &old_row},
                                      {"agent:main:Telegram:Direct:123", &new_row},
                                      {"agent:main:telegram:direct:999", &other}});
    CHECK(found.normalized_key == "agent:main:telegram:direct:123");
    CHECK(found.found_key == "agent:main:Telegram:Direct:123");
    CHECK(found.legacy_keys == std::vector<std::string>{"agent:main:Telegram:Direct:123"});
  }
  SECTION("a fresher exact key wins; the alias is still retired") {
    auto found = resolve_store_entry("agent:main:telegram:direct:123",
                                     {{"agent:main:TELEGRAM:direct:123", &old_row},
                                      {"agent:main:telegram:direct:123", &new_row}});
    CHECK(found.found_key == "agent:main:telegram:direct:123");
    CHECK(found.legacy_keys == std::vector<std::string>{"agent:main:TELEGRAM:direct:123"});
  }
  SECTION("the lookup key is normalized too") {
    auto found = resolve_store_entry(" AGENT:MAIN:telegram:direct:123 ",
                                     {{"agent:main:telegram:direct:123", &old_row}});
    CHECK(found.normalized_key == "agent:main:telegram:direct:123");
    CHECK(found.found_key == "agent:main:telegram:direct:123");
    CHECK(found.legacy_keys.empty());
  }
  SECTION("nothing stored") {
    auto found = resolve_store_entry("agent:main:main", {{"agent:main:direct:1", &other}});
    CHECK_FALSE(found.found_key);
    CHECK(found.legacy_keys.empty());
  }
}

TEST_CASE("store lookup: a lowercased Matrix alias needs delivery proof of the same room") {
  const std::string room_key = "agent:main:matrix:channel:!AbC:example.org";
  const std::string folded_key = "agent:main:matrix:channel:!abc:example.org";
  const auto lookup = [&](const session_entry& folded_entry) {
    return resolve_store_entry(room_key, {{folded_key, &folded_entry}});
  };
  SECTION("deliveryContext.to names the room (after its first '!')") {
    auto found = lookup(entry_from(
        R"({"updatedAt":5,"deliveryContext":{"channel":"matrix","to":"room:!AbC:example.org"}})"));
    CHECK(found.found_key == folded_key);
    CHECK(found.legacy_keys == std::vector<std::string>{folded_key});
  }
  SECTION("lastTo, origin.nativeChannelId, origin.to or groupId prove it as well") {
    for (const char* proof :
         {R"({"lastTo":"!AbC:example.org"})",
          R"({"origin":{"nativeChannelId":"!AbC:example.org"}})",
          R"({"origin":{"to":"matrix:!AbC:example.org"}})", R"({"groupId":"!AbC:example.org"})"}) {
      INFO(proof);
      CHECK(lookup(entry_from(proof)).found_key == folded_key);
    }
  }
  SECTION("a different room that only folds the same is not an alias") {
    auto found = lookup(entry_from(R"({"updatedAt":5,"lastTo":"room:!abc:example.org"})"));
    CHECK_FALSE(found.found_key);
    CHECK(found.legacy_keys.empty());
  }
  SECTION("no delivery target, no proof") {
    CHECK_FALSE(lookup(entry_from(R"({"updatedAt":5})")).found_key);
  }
  SECTION("a thread key with proof of its room and thread") {
    const std::string thread_key = room_key + ":thread:$Ev1";
    const session_entry e =
        entry_from(R"({"deliveryContext":{"to":"!AbC:example.org","threadId":"$Ev1"}})");
    auto found = resolve_store_entry(thread_key, {{js_lowercase(thread_key), &e}});
    CHECK(found.found_key == js_lowercase(thread_key));
  }
  SECTION("Signal keeps only a segment: its lowercased alias needs no proof") {
    const session_entry e = entry_from(R"({"updatedAt":5})");
    auto found =
        resolve_store_entry("agent:main:signal:group:AbC", {{"agent:main:signal:group:abc", &e}});
    CHECK(found.found_key == "agent:main:signal:group:abc");
  }
}

TEST_CASE("dmScope and session scope strings") {
  CHECK(parse_dm_scope("per-channel-peer") == dm_scope::per_channel_peer);
  CHECK(parse_dm_scope("per-account-channel-peer") == dm_scope::per_account_channel_peer);
  CHECK(parse_dm_scope("per-peer") == dm_scope::per_peer);
  CHECK(parse_dm_scope("main") == dm_scope::main);
  CHECK_FALSE(parse_dm_scope("per-person"));
  CHECK(to_string(dm_scope::per_channel_peer) == "per-channel-peer");
  CHECK(parse_session_scope("global") == session_scope::global);
  CHECK(parse_session_scope("per-sender") == session_scope::per_sender);
}
