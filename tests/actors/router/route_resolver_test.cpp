// Expectations come from [R§1.2] (resolveAgentRoute, buildAgentPeerSessionKey, identity
// links, legacy resolveSessionKey, main aliases) and [R§1.1] (thread keys, request keys).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "actors/router/route_resolver.hpp"

using namespace sessionrt::actors;

namespace {

route_binding bind(std::string agent, binding_match match,
                   std::optional<dm_scope> scope = std::nullopt) {
  return {std::move(agent), std::move(match), scope};
}

route_input dm(std::string channel, std::string peer_id) {
  route_input in;
  in.channel = std::move(channel);
  in.peer = route_peer{"direct", std::move(peer_id)};
  return in;
}

route_input group_event(std::string channel, std::string kind, std::string id) {
  route_input in;
  in.channel = std::move(channel);
  in.peer = route_peer{std::move(kind), std::move(id)};
  return in;
}

}  // namespace

TEST_CASE("each binding tier wins over the later ones, default agent last") {
  routing_config config;
  for (const char* id :
       {"main", "peer", "parent", "wild", "roles", "guild", "team", "acct", "chan"})
    config.agents.push_back({id, std::string(id) == "main"});
  // Listed in reverse tier order: the tier decides, not the position in the config.
  config.bindings = {
      bind("chan", {.channel = "discord", .account_id = "*"}),
      bind("acct", {.channel = "discord"}),
      bind("team", {.channel = "discord", .team_id = "t1"}),
      bind("guild", {.channel = "discord", .guild_id = "g1"}),
      bind("roles", {.channel = "discord", .guild_id = "g1", .roles = {"r1"}}),
      bind("wild", {.channel = "discord", .peer = route_peer{"channel", "*"}}),
      bind("parent", {.channel = "discord", .peer = route_peer{"channel", "p1"}}),
      bind("peer", {.channel = "discord", .peer = route_peer{"channel", "c1"}}),
  };
  route_input in = group_event("discord", "channel", "c1");
  in.parent_peer = route_peer{"channel", "p1"};
  in.guild_id = "g1";
  in.team_id = "t1";
  in.member_role_ids = {"r0", "r1"};

  const std::vector<std::pair<std::string, std::string>> expected = {
      {"peer", "binding.peer"},
      {"parent", "binding.peer.parent"},
      {"wild", "binding.peer.wildcard"},
      {"roles", "binding.guild+roles"},
      {"guild", "binding.guild"},
      {"team", "binding.team"},
      {"acct", "binding.account"},
      {"chan", "binding.channel"},
      {"main", "default"},
  };
  for (const auto& [agent, tier] : expected) {
    INFO(tier);
    const route r = resolve_route(in, config);
    CHECK(r.agent_id == agent);
    CHECK(r.matched_by == tier);
    CHECK(r.session_key == "agent:" + agent + ":discord:channel:c1");
    std::erase_if(config.bindings, [&](const route_binding& b) { return b.agent_id == agent; });
  }
}

TEST_CASE("a binding matches only if all its provided fields match") {
  routing_config config;
  config.bindings = {
      bind("vip", {.channel = "discord", .peer = route_peer{"channel", "c1"}, .guild_id = "other"}),
      bind("guildbot", {.channel = "discord", .guild_id = "g1", .roles = {"admin"}}),
      bind("fallback", {.channel = "discord"}),
  };
  route_input in = group_event("discord", "channel", "c1");
  in.guild_id = "g1";
  in.member_role_ids = {"member"};
  const route r = resolve_route(in, config);
  CHECK(r.agent_id == "fallback");
  CHECK(r.matched_by == "binding.account");
}

TEST_CASE("group and channel peer kinds match each other in bindings") {
  routing_config config;
  config.bindings = {bind("ops", {.channel = "slack", .peer = route_peer{"group", "c1"}})};
  CHECK(resolve_route(group_event("slack", "channel", "c1"), config).agent_id == "ops");
  config.bindings = {bind("ops", {.channel = "slack", .peer = route_peer{"channel", "c1"}})};
  CHECK(resolve_route(group_event("slack", "group", "c1"), config).agent_id == "ops");
  config.bindings = {bind("ops", {.channel = "slack", .peer = route_peer{"direct", "c1"}})};
  CHECK(resolve_route(group_event("slack", "group", "c1"), config).matched_by == "default");
}

TEST_CASE("account patterns: \"\" is the default account, \"*\" any, else that account") {
  routing_config config;
  config.bindings = {bind("second", {.channel = "telegram", .account_id = "Bot2"})};
  route_input in = dm("telegram", "1");
  CHECK(resolve_route(in, config).matched_by == "default");
  in.account_id = "bot2";
  CHECK(resolve_route(in, config).agent_id == "second");
  config.bindings = {bind("first", {.channel = "telegram"})};
  CHECK(resolve_route(in, config).matched_by == "default");
  in.account_id = "";
  CHECK(resolve_route(in, config).agent_id == "first");
  config.bindings = {bind("any", {.channel = "Telegram", .account_id = "*"})};
  in.account_id = "whatever";
  const route r = resolve_route(in, config);
  CHECK(r.agent_id == "any");
  CHECK(r.matched_by == "binding.channel");
  CHECK(r.account_id == "whatever");
}

TEST_CASE("default route for a DM: main session, lastRoutePolicy main") {
  const route r = resolve_route(dm(" Telegram ", "123"), routing_config{});
  CHECK(r.agent_id == "main");
  CHECK(r.channel == "telegram");
  CHECK(r.account_id == "default");
  CHECK(r.session_key == "agent:main:main");
  CHECK(r.main_session_key == "agent:main:main");
  CHECK(r.last_route == last_route_policy::main);
  CHECK(r.matched_by == "default");
}

TEST_CASE("session.mainKey shapes the main session key") {
  routing_config config;
  config.session.main_key = "Home";
  const route r = resolve_route(dm("telegram", "123"), config);
  CHECK(r.session_key == "agent:main:home");
  CHECK(r.main_session_key == "agent:main:home");
}

TEST_CASE("dmScope variants and the peer kind dm") {
  routing_config config;
  route_input in = dm("telegram", "123");
  in.account_id = "Bot1";
  config.session.direct_message_scope = dm_scope::per_peer;
  CHECK(resolve_route(in, config).session_key == "agent:main:direct:123");
  config.session.direct_message_scope = dm_scope::per_channel_peer;
  CHECK(resolve_route(in, config).session_key == "agent:main:telegram:direct:123");
  config.session.direct_message_scope = dm_scope::per_account_channel_peer;
  const route r = resolve_route(in, config);
  CHECK(r.session_key == "agent:main:telegram:bot1:direct:123");
  CHECK(r.last_route == last_route_policy::session);
  in.peer->kind = "dm";
  CHECK(resolve_route(in, config).session_key == "agent:main:telegram:bot1:direct:123");
}

TEST_CASE("a binding's session.dmScope overrides session.dmScope") {
  routing_config config;
  config.agents = {{"main", true}, {"support", false}};
  config.bindings = {bind("support", {.channel = "telegram", .peer = route_peer{"direct", "*"}},
                          dm_scope::per_channel_peer)};
  const route r = resolve_route(dm("telegram", "123"), config);
  CHECK(r.agent_id == "support");
  CHECK(r.session_key == "agent:support:telegram:direct:123");
  CHECK(r.main_session_key == "agent:support:main");
  CHECK(r.direct_message_scope == dm_scope::per_channel_peer);
  CHECK(r.last_route == last_route_policy::session);
  // Other channels keep session.dmScope "main".
  CHECK(resolve_route(dm("discord", "9"), config).session_key == "agent:main:main");
}

TEST_CASE("identity links apply through the route when dmScope is not main") {
  routing_config config;
  config.session.direct_message_scope = dm_scope::per_peer;
  config.session.links = {{"alice", {"telegram:123", "discord:987"}}};
  CHECK(resolve_route(dm("telegram", "123"), config).session_key == "agent:main:direct:alice");
  CHECK(resolve_route(dm("discord", "987"), config).session_key == "agent:main:direct:alice");
  config.session.direct_message_scope = dm_scope::main;
  CHECK(resolve_route(dm("telegram", "123"), config).session_key == "agent:main:main");
}

TEST_CASE("groups, channels and rooms get their own keys") {
  routing_config config;
  const route g = resolve_route(group_event("telegram", "group", "-100123"), config);
  CHECK(g.session_key == "agent:main:telegram:group:-100123");
  CHECK(g.last_route == last_route_policy::session);
  CHECK(resolve_route(group_event("discord", "channel", "C9"), config).session_key ==
        "agent:main:discord:channel:c9");
  CHECK(resolve_route(group_event("irc", "room", "Lobby"), config).session_key ==
        "agent:main:irc:room:lobby");
  CHECK(resolve_route(group_event("signal", "group", "AbC="), config).session_key ==
        "agent:main:signal:group:AbC=");
}

TEST_CASE("thread id is appended to the base key, lowercased - Matrix keeps case") {
  route_input in = group_event("slack", "channel", "C1");
  in.thread_id = "1700000000.ABC";
  const route r = resolve_route(in, routing_config{});
  CHECK(r.session_key == "agent:main:slack:channel:c1:thread:1700000000.abc");
  CHECK(r.base_session_key == "agent:main:slack:channel:c1");
  CHECK(r.parent_session_key == "agent:main:slack:channel:c1");

  route_input matrix = group_event("matrix", "channel", "!Room:Example.org");
  matrix.thread_id = "$EvT";
  CHECK(resolve_route(matrix, routing_config{}).session_key ==
        "agent:main:matrix:channel:!Room:Example.org:thread:$EvT");

  const route no_thread = resolve_route(group_event("slack", "channel", "C1"), routing_config{});
  CHECK(no_thread.parent_session_key.empty());
}

TEST_CASE("thread parent peer inherits the parent's binding") {
  routing_config config;
  config.bindings = {bind("ops", {.channel = "discord", .peer = route_peer{"channel", "parent1"}})};
  route_input in = group_event("discord", "channel", "thread77");
  in.parent_peer = route_peer{"channel", "parent1"};
  const route r = resolve_route(in, config);
  CHECK(r.agent_id == "ops");
  CHECK(r.matched_by == "binding.peer.parent");
  CHECK(r.session_key == "agent:ops:discord:channel:thread77");
}

TEST_CASE("an explicit session key is normalized and passed through") {
  routing_config config;
  route_input in = dm("telegram", "123");
  in.explicit_session_key = " Agent:Ops:Hook:ABC ";
  route r = resolve_route(in, config);
  CHECK(r.session_key == "agent:ops:hook:abc");
  CHECK(r.agent_id == "ops");
  CHECK(r.matched_by == "explicit");
  CHECK(r.main_session_key == "agent:ops:main");

  in.explicit_session_key = "hook:XYZ";  // request key -> stored as agent:<a>:hook:<uuid>
  CHECK(resolve_route(in, config).session_key == "agent:main:hook:xyz");
  in.explicit_session_key = "cron:job1";
  CHECK(resolve_route(in, config).session_key == "agent:main:cron:job1");
  in.explicit_session_key = "main";
  r = resolve_route(in, config);
  CHECK(r.session_key == "agent:main:main");
  CHECK(r.last_route == last_route_policy::main);
}

TEST_CASE("session.scope global turns main aliases into global") {
  routing_config config;
  config.session.scope = session_scope::global;
  const route r = resolve_route(dm("telegram", "123"), config);
  CHECK(r.session_key == "global");
  CHECK(r.main_session_key == "global");
  CHECK(r.last_route == last_route_policy::main);
  CHECK(resolve_route(group_event("telegram", "group", "-1"), config).session_key ==
        "agent:main:telegram:group:-1");
}

TEST_CASE("the default agent is the one marked default, else the first") {
  routing_config config;
  config.agents = {{"alpha", false}, {"Beta", true}};
  CHECK(default_agent_of(config) == "beta");
  CHECK(resolve_route(dm("telegram", "1"), config).session_key == "agent:beta:main");
  config.agents = {{"alpha", false}, {"beta", false}};
  CHECK(default_agent_of(config) == "alpha");
  CHECK(default_agent_of(routing_config{}) == "main");
}

TEST_CASE("legacy resolveSessionKey(scope, ctx, mainKey)") {
  legacy_message_context group;
  group.provider = "telegram";
  group.chat_type = "group";
  group.from = "telegram:group:-100123";
  CHECK(resolve_legacy_session_key(session_scope::per_sender, group, "") ==
        "agent:main:telegram:group:-100123");
  CHECK(resolve_legacy_session_key(session_scope::global, group, "") == "global");

  legacy_message_context channel;
  channel.provider = "discord";
  channel.chat_type = "channel";
  channel.from = "discord:channel:C42";
  CHECK(resolve_legacy_session_key(session_scope::per_sender, channel, "", "ops") ==
        "agent:ops:discord:channel:c42");

  legacy_message_context direct;
  direct.provider = "telegram";
  direct.from = "telegram:123";
  CHECK(resolve_legacy_session_key(session_scope::per_sender, direct, "") == "agent:main:main");
  CHECK(resolve_legacy_session_key(session_scope::per_sender, direct, "Home") == "agent:main:home");

  direct.session_key = " Agent:Main:Telegram:Direct:123 ";
  CHECK(resolve_legacy_session_key(session_scope::global, direct, "") ==
        "agent:main:telegram:direct:123");
}

TEST_CASE("a forced agent builds the whole route (key included) for that agent, bindings skipped") {
  routing_config config;
  config.agents = {{"main", true}, {"work", false}};
  config.bindings = {bind("main", {.channel = "telegram"})};
  route_input in = dm("telegram", "123");
  in.forced_agent_id = " Work ";
  const route r = resolve_route(in, config);
  CHECK(r.agent_id == "work");
  CHECK(r.session_key == "agent:work:main");
  CHECK(r.main_session_key == "agent:work:main");
  CHECK(r.matched_by == "forced");
  in.forced_agent_id = "nope";  // not configured: kept, so the router can refuse it by name
  CHECK(resolve_route(in, config).agent_id == "nope");
}
