// quiesce_rule: the simulator moves virtual time only from what the sessions said they wait on
// (and the turns in flight the model accounts for); before, a turn parked on its session's
// debounce alarm looked like one between actors, and the quiesce waited 1 s of wall clock
// (20 rounds of 50 ms) before it moved the clock. A scenario whose follow-ups wait for the
// debounce now runs without one fallback round, on the manual clock, without sleeping.
#include <catch2/catch.hpp>

#include "sim/quiesce_rule.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_run.hpp"

using namespace sessionrt;
using sim::quiesce_verdict;

TEST_CASE("quiesce_rule: only waits on the gate, the model and the sessions' alarms let the clock move") {
  actors::settle_report r;
  CHECK(sim::judge_quiesce(r, 0) == quiesce_verdict::time);
  // A turn the model does not wait on, explained by a session on its debounce alarm (the
  // case the wall-clock fallback used to take: unexplained 1 > the gate's 0).
  actors::session_wait w;
  w.wake_at_ms = 1000;
  w.queued = 1;
  r.add(w);
  CHECK(sim::judge_quiesce(r, 1) == quiesce_verdict::time);
  // ... or by one waiting for the gate.
  actors::session_wait g;
  g.on_gate = true;
  r.add(g);
  CHECK(sim::judge_quiesce(r, 2) == quiesce_verdict::time);
  // One more turn than the sessions account for: between actors the settle did not ask.
  CHECK(sim::judge_quiesce(r, 3) == quiesce_verdict::unexplained);
}

TEST_CASE("quiesce_rule: acks on the log settle again, the pool, the store and a lock's backoff are waited for") {
  actors::session_wait log;
  log.acks_on_log = 1;
  actors::settle_report r;
  r.add(log);
  CHECK(sim::judge_quiesce(r, 0) == quiesce_verdict::settle_again);
  for (auto set : {+[](actors::session_wait& w) { w.on_pool = true; }, +[](actors::session_wait& w) { w.lock_retry = true; },
                   +[](actors::session_wait& w) { w.row_fetch = true; },
                   +[](actors::session_wait& w) { w.acks_on_store = 1; }}) {
    actors::session_wait w;
    w.on_runner = true;
    set(w);
    actors::settle_report one;
    one.add(w);
    CHECK(sim::judge_quiesce(one, 0) == quiesce_verdict::wait_for_work);
  }
  // The model's own wait is virtual time.
  actors::session_wait m;
  m.on_runner = true;
  actors::settle_report model;
  model.add(m);
  CHECK(sim::judge_quiesce(model, 0) == quiesce_verdict::time);
}

TEST_CASE("quiesce_rule: follow-ups that wait for the debounce move the clock without the wall-clock fallback") {
  // Two users write every ~90 s on average (more by day) while each answer takes 60 s: messages
  // queue behind the running turn, and a follow-up waits for 30 s of quiet on its session's
  // alarm. (The same scenario before: 1 s of wall clock per such wait.)
  const std::string text = R"({"name": "debounce", "start": "2026-10-05T08:00:00+02:00", "timeZone": "Europe/Berlin",
    "config": {"session": {"dmScope": "per-channel-peer"}, "messages": {"queue": {"debounceMs": 30000}}},
    "model": {"latency": {"kind": "fixed", "ms": 60000}},
    "workload": {"users": 2, "days": 1, "messagesPerUserPerDay": 1000, "channels": ["telegram"]},
    "steps": []})";
  auto sc = sim::parse_scenario(text);
  REQUIRE(sc.ok());
  sim::run_options o;
  o.seed = 3;
  auto out = sim::run_scenario(*sc, o);
  REQUIRE(out.ok());
  const sim::quiesce_tally& t = out->quiesce;
  INFO(t.line());
  CHECK(out->failed == 0);
  CHECK(out->turns > 500);
  CHECK(t.debounce > 0);  // sessions said they waited on their alarm ...
  CHECK(t.on_time > 0);   // ... and the clock moved on their word
  CHECK(t.unexplained == 0);
  CHECK(t.fallback_stalls == 0);
  CHECK(t.fallback_gave_up == 0);
  CHECK(t.rounds_exhausted == 0);
}
