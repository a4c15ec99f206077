// chat.send retried with the idempotencyKey of a run that failed: answered with that run's error
// (UNAVAILABLE), as OpenClaw's gateway answers from its dedupe cache, not {"status":"ok"}; no
// second turn starts.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using namespace sessionrt::gateway::testing;
namespace bj = boost::json;
using namespace std::chrono_literals;

TEST_CASE("gateway: a chat.send retry of a failed run gets the run error and not ok") {
  running_gateway g;
  auto r = g.client({"operator.write"});
  REQUIRE(r->request("sessionrt.runner.attach", bj::object{}, 5s).ok());
  auto c = g.client();
  const bj::object params{{"sessionKey", "main"}, {"message", "anyone?"}, {"idempotencyKey", "fail-1"}};
  auto first = c->request("chat.send", params, 10s);
  REQUIRE(first.ok());
  REQUIRE(first->at("status") == "started");
  REQUIRE(wait_event(*r, [](const gateway_event& e) { return e.event == "sessionrt.turn.request"; }, 10s).ok());
  r->socket().abort();  // the only runner goes: the turn fails
  auto events = run_events(*c, "fail-1");
  REQUIRE(events.ok());
  REQUIRE(events->back().at("state") == "error");
  const std::string error(events->back().at("errorMessage").as_string());

  auto retry = c->request("chat.send", params, 10s);
  REQUIRE_FALSE(retry.ok());
  REQUIRE(c->last_error());
  CHECK(c->last_error()->code == "UNAVAILABLE");
  CHECK(c->last_error()->message == error);
  // No second turn: the session still has the one user line the failed run kept.
  auto h = c->request("chat.history", bj::object{{"sessionKey", "main"}}, 10s);
  REQUIRE(h.ok());
  std::size_t users = 0;
  for (const auto& m : h->at("messages").as_array())
    if (m.at("role") == "user") ++users;
  CHECK(users == 1);
}
