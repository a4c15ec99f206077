// step_host: the blocking actor the virtual-time driver's calls reuse. A lease taken while
// another is out gets a fresh actor (no caller waits for another); once the lease is back the
// next gets the shared one again; without reuse every lease is fresh; after reset() the actor
// system ends (an actor left alive would keep ~actor_system waiting: the test would hang).
#include <catch2/catch.hpp>

#include <thread>

#include "runtime/host_self.hpp"

using sessionrt::runtime::step_host;

namespace {
caf::actor_addr addr(step_host::lease& l) { return l.self().address(); }
}  // namespace

TEST_CASE("step_host: one actor for the leases in turn, a fresh one while it is out or without reuse", "[host_self]") {
  caf::actor_system_config cfg;
  cfg.set("logger.verbosity", caf::atom("quiet"));
  auto sys = std::make_unique<caf::actor_system>(cfg);
  step_host host;
  caf::actor_addr shared;
  {
    auto a = host.take(*sys, true);
    shared = addr(a);
    auto b = host.take(*sys, true);  // a is out: b is fresh
    CHECK(addr(b) != shared);
    // Another thread finds it leased as well.
    caf::actor_addr other;
    std::thread([&] {
      auto c = host.take(*sys, true);
      other = addr(c);
    }).join();
    CHECK(other != shared);
    CHECK(other != addr(b));
  }
  {
    auto again = host.take(*sys, true);
    CHECK(addr(again) == shared);
    // It still answers: a request to itself's peer (a fresh actor) round-trips.
    auto echo = sys->spawn([]() -> caf::behavior { return {[](int x) { return x + 1; }}; });
    int got = 0;
    again.self()->request(echo, caf::infinite, 41).receive([&](int x) { got = x; }, [](caf::error&) {});
    CHECK(got == 42);
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  }
  {
    auto fresh = host.take(*sys, false);
    CHECK(addr(fresh) != shared);
  }
  host.reset();
  sys.reset();  // returns only if no actor of step_host is left (else: the test's timeout)
}
