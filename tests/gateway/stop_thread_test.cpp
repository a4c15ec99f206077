// A host may stop the gateway from any thread (a signal-handling thread, a service framework's
// shutdown hook), not only the one that started it.
#include <catch2/catch.hpp>

#include <future>
#include <thread>

#include "tests/gateway/gateway_fixture.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;
using sessionrt::gateway::testing::running_gateway;

TEST_CASE("gateway_server: stop() from another thread returns and the server is gone", "[gateway]") {
  running_gateway g;
  REQUIRE(g.server);
  auto stopped = std::async(std::launch::async, [&] { return g.server->stop(); });
  // A hang here is the failure; CTest's timeout ends it.
  auto st = stopped.get();
  CHECK(st.ok());
  g.server.reset();
}

TEST_CASE("gateway_server: stop() at once on the starting thread returns", "[gateway]") {
  running_gateway g;
  REQUIRE(g.server);
  CHECK(g.server->stop().ok());
  g.server.reset();
}
