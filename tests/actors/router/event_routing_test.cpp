// What the router derives from one event before it reaches a session: the route memo key, the
// chat facts handed to the session, and where a system event goes.
#include <catch2/catch.hpp>

#include "actors/router/event_routing.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

chat_event chat(std::string channel, std::string kind, std::string peer) {
  chat_event ev;
  ev.channel = std::move(channel);
  ev.peer_kind = std::move(kind);
  ev.peer_id = std::move(peer);
  return ev;
}

route_facts facts(const chat_event& ev, const routing_config& config = {}) {
  return facts_of(ev, resolve_route(route_input_of(ev), config));
}

}  // namespace

TEST_CASE("route memo keys: equal routing fields share a key, a field moved to another slot does not") {
  const chat_event a = chat("telegram", "direct", "42");
  CHECK(route_cache_key(a) == route_cache_key(chat("telegram", "direct", "42")));
  chat_event text_differs = a;
  text_differs.text = "something else entirely";  // not a routing field
  CHECK(route_cache_key(text_differs) == route_cache_key(a));
  // The same characters in another field, or split differently, are another input.
  chat_event peer_as_thread = chat("telegram", "direct", "");
  peer_as_thread.thread_id = "42";
  CHECK(route_cache_key(peer_as_thread) != route_cache_key(a));
  chat_event split = chat("telegram", "direct", "4");
  split.parent_peer_kind = "2";
  CHECK(route_cache_key(split) != route_cache_key(a));
  chat_event roles = a;
  roles.member_role_ids = {"r1", "r2"};
  chat_event one_role = a;
  one_role.member_role_ids = {"r1r2"};
  CHECK(route_cache_key(roles) != route_cache_key(one_role));
  CHECK(route_cache_key(roles) != route_cache_key(a));
}

TEST_CASE("route input carries every routing field of the event") {
  chat_event ev = chat("discord", "channel", "c1");
  ev.account_id = "bot2";
  ev.parent_peer_kind = "channel";
  ev.parent_peer_id = "parent";
  ev.guild_id = "g";
  ev.team_id = "t";
  ev.member_role_ids = {"admin"};
  ev.thread_id = "th";
  ev.session_key = "agent:main:custom";
  ev.agent_id = "ops";
  const route_input in = route_input_of(ev);
  CHECK(in.channel == "discord");
  CHECK(in.account_id == "bot2");
  REQUIRE(in.peer);
  CHECK(in.peer->kind == "channel");
  CHECK(in.peer->id == "c1");
  REQUIRE(in.parent_peer);
  CHECK(in.parent_peer->id == "parent");
  CHECK(in.guild_id == "g");
  CHECK(in.team_id == "t");
  CHECK(in.member_role_ids == std::vector<std::string>{"admin"});
  CHECK(in.thread_id == "th");
  CHECK(in.explicit_session_key == "agent:main:custom");
  CHECK(in.forced_agent_id == "ops");
  // No peer at all: no peer in the input (a system-ish chat event routed to main).
  CHECK_FALSE(route_input_of(chat("cli", "", "")).peer);
}

TEST_CASE("chat facts: the chat type from the peer kind, threads from the event or the key") {
  struct row {
    const char* kind;
    const char* chat_type;
    bool is_group;
  };
  for (const row& r : {row{"direct", "direct", false}, row{"dm", "direct", false}, row{"", "direct", false},
                       row{"group", "group", true}, row{"channel", "channel", true}, row{"room", "group", true}}) {
    INFO(r.kind);
    const route_facts f = facts(chat("slack", r.kind, "p1"));
    CHECK(f.chat_type == r.chat_type);
    CHECK(f.is_group == r.is_group);
    CHECK(f.channel == "slack");
    CHECK(f.peer_id == "p1");
    CHECK_FALSE(f.is_thread);
  }
  chat_event threaded = chat("slack", "channel", "c9");
  threaded.thread_id = "1700000000.1";
  const route_facts t = facts(threaded);
  CHECK(t.is_thread);
  CHECK(t.thread_id == "1700000000.1");
  // An explicit key with a thread suffix is a thread even when the event names none.
  chat_event by_key = chat("slack", "channel", "c9");
  by_key.session_key = "agent:main:slack:channel:c9:thread:77";
  CHECK(facts(by_key).is_thread);
  chat_event account = chat("telegram", "direct", "5");
  account.account_id = "Second-Bot";
  CHECK(facts(account).account_id == "second-bot");  // the route's normalized account
  CHECK(facts(chat("telegram", "direct", "5")).account_id == "default");
}

TEST_CASE("system events: their own key, else the cron job's, else the agent's main key") {
  routing_config routing;
  routing.session.main_key = "home";
  system_event hb;
  hb.kind = system_event_kind::heartbeat;
  system_target t = system_event_target(hb, routing);
  CHECK(t.agent == "main");
  CHECK(t.key == "agent:main:home");

  system_event cron;
  cron.kind = system_event_kind::cron;
  cron.job_id = "nightly";
  t = system_event_target(cron, routing);
  CHECK(t.key.find("nightly") != std::string::npos);
  CHECK(t.key.rfind("agent:main:cron:", 0) == 0);

  system_event own;
  own.kind = system_event_kind::exec;
  own.session_key = "agent:main:telegram:direct:42";
  CHECK(system_event_target(own, routing).key == "agent:main:telegram:direct:42");
  own.session_key = "AGENT:Main:Telegram:Direct:42";  // normalized
  CHECK(system_event_target(own, routing).key == "agent:main:telegram:direct:42");
  own.session_key = "main";  // an alias of the main key
  CHECK(system_event_target(own, routing).key == "agent:main:home");
  own.session_key = "agent:main:../../etc";  // implausible: the main key instead
  CHECK(system_event_target(own, routing).key == "agent:main:home");

  system_event other_agent;
  other_agent.agent_id = "Ops";
  t = system_event_target(other_agent, routing);
  CHECK(t.agent == "ops");
  CHECK(t.key == "agent:ops:home");
}
