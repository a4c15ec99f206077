// system_event_check: where a system event goes, or why it is refused.
#include <catch2/catch.hpp>

#include "actors/router/system_event_check.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

TEST_CASE("system event check: keys, agents, job ids, sizes and isolated heartbeats") {
  routing_config routing;
  system_event ev;
  ev.kind = system_event_kind::heartbeat;
  auto main = check_system_event(ev, routing, 100);
  REQUIRE(main.ok());
  CHECK(main->key == "agent:main:main");
  CHECK(main->base_key.empty());

  ev.session_key = "Agent:Ops:Telegram:Direct:42";
  auto ops = check_system_event(ev, routing, 100);
  REQUIRE(ops.ok());
  CHECK(ops->agent == "ops");
  CHECK(ops->key == "agent:ops:telegram:direct:42");

  ev.agent_id = "main";
  CHECK(check_system_event(ev, routing, 100).error().code() == errc::invalid_argument);

  ev.agent_id.clear();
  ev.session_key = std::string("agent:main:a\x01", 13);
  CHECK(check_system_event(ev, routing, 100).error().message().find("is not a valid key") != std::string::npos);

  ev.session_key.clear();
  ev.text = std::string(101, 'x');
  auto big = check_system_event(ev, routing, 100);
  REQUIRE(!big.ok());
  CHECK(big.error().code() == errc::limit_exceeded);
  CHECK(big.error().message().find("session.maxMessageBytes (100 bytes)") != std::string::npos);

  ev.text = "ping";
  auto isolated = check_system_event(ev, routing, 100, true);
  REQUIRE(isolated.ok());
  CHECK(isolated->key == "agent:main:main:heartbeat");
  CHECK(isolated->base_key == "agent:main:main");
  ev.session_key = "agent:main:cron:digest";  // synthetic sessions are not isolated again
  CHECK(check_system_event(ev, routing, 100, true)->key == "agent:main:cron:digest");

  system_event cron;
  cron.kind = system_event_kind::cron;
  cron.job_id = "nightly";
  CHECK(check_system_event(cron, routing, 100)->key == "agent:main:cron:nightly");
  cron.job_id = "night:ly";
  CHECK(check_system_event(cron, routing, 100).error().message().find("night:ly") != std::string::npos);
}
