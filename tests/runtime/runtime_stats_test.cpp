// runtime::stats(): the runtime's counters as fields (runtime_stats.hpp), which /metrics and the
// tests read instead of parsing text; to_text() keeps the one-line form status.runtime carries.
// On virtual time: sessions start with turns, trim and passivate on advance(), settle() between.
#include <catch2/catch.hpp>

#include "runtime/runtime_stats.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

void per_peer_idle(actors::runtime_settings& s) {
  s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  actors::reset_config off;  // keep the 04:00 daily reset out of the counts
  off.mode = actors::reset_mode::none;
  s.session.reset.reset = off;
  s.session.trim_idle_ms = 30000;
  s.session.passivate_idle_ms = 60000;
}

}  // namespace

TEST_CASE("runtime stats: live, trimmed, turns and routes follow sessions as they start, trim and passivate") {
  testing::lifecycle_harness h;
  auto rt = h.start(per_peer_idle);

  const runtime_stats empty = rt->stats();
  CHECK_FALSE(empty.stopped);
  CHECK(empty.router_error.empty());
  CHECK(empty.timers_error.empty());
  CHECK(empty.live == 0);
  CHECK(empty.slots == 0);
  CHECK(empty.turns == 0);

  REQUIRE(rt->send(testing::dm("1", "hello")).get().st.ok());
  REQUIRE(rt->send(testing::dm("2", "hello")).get().st.ok());
  rt->settle();
  const runtime_stats two = rt->stats();
  CHECK(two.live == 2);
  CHECK(two.open == 2);
  CHECK(two.slots == 2);
  CHECK(two.trimmed == 0);
  CHECK(two.turns == 2);
  CHECK(two.routes == 2);
  CHECK(two.passivating == 0);
  CHECK(two.queued == 0);
  CHECK(two.waiting == 0);

  REQUIRE(rt->advance(30001).ok());  // idle past session.trimIdleMs: both trimmed, still live
  rt->settle();
  const runtime_stats idle = rt->stats();
  CHECK(idle.live == 2);
  CHECK(idle.trimmed == 2);
  CHECK(idle.routes == 0);

  REQUIRE(rt->send(testing::dm("1", "again")).get().st.ok());  // a turn: no longer trimmed
  rt->settle();
  const runtime_stats woke = rt->stats();
  CHECK(woke.live == 2);
  CHECK(woke.trimmed == 1);
  CHECK(woke.turns == 3);

  REQUIRE(rt->advance(60001).ok());  // idle past session.passivateIdleMs: both passivated
  rt->settle();
  const runtime_stats gone = rt->stats();
  CHECK(gone.live == 0);
  CHECK(gone.open == 0);
  CHECK(gone.trimmed == 0);
  CHECK(gone.routes == 0);
  CHECK(gone.turns == 3);  // counted since start, not per live session

  REQUIRE(rt->stop().ok());
  CHECK(rt->stats().stopped);
  CHECK(to_text(rt->stats()) == "stopped");
}

TEST_CASE("runtime stats: to_text renders the diagnostics line, or what did not answer") {
  runtime_stats s;
  s.live = 3;
  s.trimmed = 1;
  s.slots = 4;
  s.open = 3;
  s.queued = 1;
  s.turns = 7;
  s.routes = 2;
  s.timers = 5;
  s.model_running = 1;
  s.model_peak = 2;
  CHECK(to_text(s) ==
        "live=3 trimmed=1 slots=4 open=3 passivating=0 queued=1 waiting=0 turns=7 routes=2 timers=5 "
        "model_running=1 model_waiting=0 model_peak=2");
  s.router_error = "timeout";
  s.timers_error = "down";
  CHECK(to_text(s) == "router=? (timeout) timers=? (down) model_running=1 model_waiting=0 model_peak=2");
}
