// Scenario files: bad ones are refused before anything runs with the step, the key and the
// reason; a run checks its expectations (a wrong one fails, naming its step); one seed gives
// byte-identical report JSON; a crash step restarts the runtime and its recovery checks pass.
#include <catch2/catch.hpp>

#include <string>

#include "messages/json_writer.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_run.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

std::string with_steps(const std::string& steps, const std::string& extra = "") {
  return R"({"name": "t", "start": "2026-03-28T20:00:00+01:00", "timeZone": "Europe/Berlin",
             "config": {"session": {"dmScope": "per-peer"}},
             "model": {"latency": {"kind": "fixed", "ms": 500}}, )" +
         extra + R"("steps": )" + steps + "}";
}

std::string parse_error(const std::string& text) {
  auto sc = sim::parse_scenario(text);
  REQUIRE_FALSE(sc.ok());
  CHECK(sc.error().code() == errc::invalid_argument);
  return sc.error().message();
}

const std::string kThreeSteps = R"([
  {"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "hello"}, "expect": {"ok": true}},
  {"id": "b", "after": "10m", "send": {"channel": "telegram", "peer": "1", "text": "again"},
   "expect": {"ok": true, "sessionId": {"same": "a"}, "resetReason": "none"}},
  {"id": "c", "at": "2026-03-29T05:00:00+02:00", "send": {"channel": "telegram", "peer": "1", "text": "next day"},
   "expect": {"ok": true, "sessionId": {"changed": "a"}, "resetReason": "daily", "transcript": {"contains": ["next day"]}}}
])";

sim::run_outcome run(const std::string& text, std::optional<std::uint64_t> seed = std::nullopt, bool on_disk = false) {
  auto sc = sim::parse_scenario(text);
  REQUIRE(sc.ok());
  sim::run_options o;
  o.seed = seed;
  o.on_disk = on_disk;
  auto out = sim::run_scenario(*sc, o);
  REQUIRE(out.ok());
  return std::move(*out);
}

}  // namespace

TEST_CASE("scenario: an unknown reset reason names the step, the key and the choices") {
  const std::string msg = parse_error(with_steps(R"([
    {"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "x"}},
    {"id": "b", "send": {"channel": "telegram", "peer": "1", "text": "x"}},
    {"id": "c", "send": {"channel": "telegram", "peer": "1", "text": "x"}},
    {"id": "d", "send": {"channel": "telegram", "peer": "1", "text": "x"}, "expect": {"resetReason": "dialy"}}])"));
  CHECK(msg == "steps[3].expect.resetReason: unknown value 'dialy' (daily|idle|new|reset|none)");
}

TEST_CASE("scenario: bad files are refused with the key path and the reason") {
  CHECK(parse_error(with_steps(R"([{"id": "a", "send": {"channel": "telegram", "peer": "1", "txt": "x"}}])")) ==
        "steps[0].send.txt: unknown key (did you mean text?)");
  CHECK(parse_error(with_steps(R"([{"send": {"channel": "telegram", "peer": "1", "text": "x"}}])"))
            .starts_with("steps[0].id: missing"));
  CHECK(parse_error(with_steps(R"([{"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "x"},
                                     "expect": {"sessionId": {"same": "later"}}}])")) ==
        "steps[0].expect.sessionId.same: 'later' is not the id of an earlier step");
  CHECK(parse_error(with_steps(R"([{"id": "a", "at": "2026-03-28T10:00:00+01:00", "advance": "1h"}])"))
            .starts_with("steps[0].at: 2026-03-28T09:00:00.000Z is before the previous step"));
  CHECK(parse_error(with_steps(R"([{"id": "a", "fault": {"kind": "enospc"}}])")).starts_with("steps[0].fault.for: missing"));
  CHECK(parse_error(with_steps(R"([{"id": "a", "advance": "1h"}])", R"("config": {"session": {"dmScope": "per-person"}}, )"))
            .find("config") == 0);
  CHECK(parse_error(R"({"name": "t", "start": "2026-03-28T20:00:00+01:00", "timeZone": "Mars/Olympus", "steps": []})")
            .starts_with("timeZone: "));
  CHECK(parse_error(with_steps(R"([{"id": "a", "advance": "1h", "expect": {"ok": true}}])"))
            .starts_with("steps[0].expect: ok, key"));
  CHECK(parse_error(with_steps(R"([{"id": "a", "command": {"channel": "telegram", "peer": "1", "text": "new"}}])")) ==
        "steps[0].command.text: a command starts with '/', got \"new\"");
}

TEST_CASE("scenario: the scripted steps pass their expectations, across the daily reset") {
  auto out = run(with_steps(kThreeSteps));
  for (const auto& f : out.failures) UNSCOPED_INFO(f);
  CHECK(out.failed == 0);
  const auto& summary = out.report.at("summary").as_object();
  CHECK(summary.at("resets").as_object().at("daily").as_int64() == 1);
  CHECK(summary.at("turns").as_int64() == 3);
  CHECK(summary.at("expectations").as_object().at("passed").as_int64() >= 8);
}

TEST_CASE("scenario: an expectation that does not hold fails and names its step") {
  auto out = run(with_steps(R"([
    {"id": "first", "send": {"channel": "telegram", "peer": "1", "text": "hello"}},
    {"id": "wrong", "after": "5m", "send": {"channel": "telegram", "peer": "1", "text": "again"},
     "expect": {"sessionId": {"changed": "first"}, "key": "agent:main:direct:2"}}])"));
  REQUIRE(out.failed == 2);
  auto failed = [&](const std::string& start, const std::string& why) {
    return std::any_of(out.failures.begin(), out.failures.end(), [&](const std::string& f) {
      return f.starts_with(start) && f.find(why) != std::string::npos;
    });
  };
  CHECK(failed("wrong: new session since first", "still session"));
  CHECK(failed("wrong: key agent:main:direct:2", "key is agent:main:direct:1"));
  CHECK(out.report.at("summary").as_object().at("expectations").as_object().at("failed").as_int64() == 2);
}

TEST_CASE("scenario: two runs with one seed give byte-identical JSON") {
  const std::string text = with_steps(kThreeSteps, R"("workload": {"users": 15, "days": 1, "messagesPerUserPerDay": 10}, )");
  const std::string a = json::to_compact(boost::json::value(run(text, 5).report));
  const std::string b = json::to_compact(boost::json::value(run(text, 5).report));
  CHECK(a == b);
  CHECK(a.find("\"turns\":") != std::string::npos);
  const std::string c = json::to_compact(boost::json::value(run(text, 6).report));
  CHECK(c != a);  // the seed matters: the workload and the latencies change
}

// The pass under a disk budget evicts rows and deletes files by size and age: it must plan from
// the virtual time's state, not from whichever store write or turn the threads had finished.
TEST_CASE("scenario: a disk budget that evicts under load gives byte-identical JSON in two runs") {
  const std::string text = R"({"name": "budget", "start": "2026-10-05T00:00:00+02:00", "timeZone": "Europe/Berlin",
    "config": {"session": {"dmScope": "per-channel-peer",
               "maintenance": {"mode": "enforce", "maxDiskBytes": "48kb"}}},
    "model": {"latency": {"kind": "lognormal", "medianMs": 800, "sigma": 0.5, "maxMs": 20000}},
    "workload": {"users": 30, "days": 1, "messagesPerUserPerDay": 12, "newPerUserPerDay": 0.5,
                 "messageBytes": {"median": 300, "sigma": 0.8, "max": 2000}},
    "steps": []})";
  const auto first = run(text, 3);
  const std::string a = json::to_compact(boost::json::value(first.report));
  const std::string b = json::to_compact(boost::json::value(run(text, 3).report));
  CHECK(first.report.at("summary").as_object().at("maintenanceActions").as_int64() > 20);
  CHECK(a == b);
}

// A power loss keeps what was synced: with the store written at virtual times (the step is its
// window), what survives, and so the report, does not depend on the machine's timing; and the
// files in memory (the default) give the report a run on disk gives.
TEST_CASE("scenario: a crash under load gives byte-identical JSON in two runs, in memory and on disk") {
  const std::string text = R"({"name": "crash under load", "start": "2026-10-05T00:00:00+02:00", "timeZone": "Europe/Berlin",
    "config": {"session": {"dmScope": "per-channel-peer",
               "maintenance": {"mode": "enforce", "maxDiskBytes": "96kb"}}},
    "model": {"latency": {"kind": "lognormal", "medianMs": 900, "sigma": 0.6, "maxMs": 20000}},
    "workload": {"users": 25, "days": 1, "messagesPerUserPerDay": 16, "newPerUserPerDay": 0.3,
                 "heartbeat": {"every": "1h"}},
    "steps": [{"id": "cut", "at": "2026-10-05T13:00:00+02:00", "crash": {}},
              {"id": "cut-again", "at": "2026-10-05T19:30:00+02:00", "crash": {}}]})";
  const auto first = run(text, 11);
  for (const auto& f : first.failures) UNSCOPED_INFO(f);
  CHECK(first.failed == 0);
  CHECK(first.report.at("summary").as_object().at("crashes").as_int64() == 2);
  const std::string a = json::to_compact(boost::json::value(first.report));
  const std::string b = json::to_compact(boost::json::value(run(text, 11).report));
  const std::string disk = json::to_compact(boost::json::value(run(text, 11, /*on_disk=*/true).report));
  CHECK(a == b);
  CHECK(a == disk);
}

// The entry cap evicts sessions whose turns wait on a slow model when the pass runs: their
// actors decline to passivate (the pass skips their files) instead of holding the pass, and
// with it virtual time, until the turn ends (which it never would). The DM sessions are
// protected (OpenClaw 2026.9: external conversations, actors/router/protected_key.hpp): what the
// cap takes are the isolated cron runs' synthetic rows, whose turns wait on the model too.
TEST_CASE("scenario: a pass that would evict sessions with turns in flight does not stop the clock") {
  const std::string text = R"({"name": "cap", "start": "2026-10-05T08:00:00+02:00", "timeZone": "Europe/Berlin",
    "config": {"session": {"dmScope": "per-channel-peer", "maintenance": {"mode": "enforce", "maxEntries": 2}}},
    "model": {"latency": {"kind": "fixed", "ms": 480000}},
    "workload": {"users": 60, "days": 1, "messagesPerUserPerDay": 24, "cron": {"jobs": 12, "every": "20m"}},
    "steps": []})";
  const auto out = run(text, 9);
  const auto& summary = out.report.at("summary").as_object();
  CHECK(summary.at("turns").as_int64() > 60);
  CHECK(summary.at("maintenanceActions").as_int64() > 0);
  CHECK(out.failed == 0);
}

TEST_CASE("scenario: a crash restarts on the same state dir and the recovery checks hold") {
  auto out = run(with_steps(R"([
    {"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "keep this"}, "expect": {"ok": true}},
    {"id": "b", "after": "1m", "send": {"channel": "telegram", "peer": "2", "text": "and this"}, "expect": {"ok": true}},
    {"id": "cut", "after": "1m", "crash": {}},
    {"id": "c", "after": "1m", "send": {"channel": "telegram", "peer": "1", "text": "after"},
     "expect": {"ok": true, "sessionId": {"same": "a"}, "transcript": {"contains": ["keep this", "after"]}}}])"));
  for (const auto& f : out.failures) UNSCOPED_INFO(f);
  CHECK(out.failed == 0);
  const auto& report = out.report;
  CHECK(report.at("summary").as_object().at("crashes").as_int64() == 1);
  std::size_t recovery = 0;
  for (const auto& e : report.at("expectations").as_array())
    if (e.as_object().at("step").as_string() == "cut") ++recovery;
  CHECK(recovery >= 5);  // restart, store loads, transcripts load, acked messages, ids, agreement
  REQUIRE(report.at("faults").as_array().size() == 1);
  CHECK(report.at("faults").as_array()[0].as_object().at("kind").as_string() == "crash");
}

// Under virtual time the store has no window of its own; the engine keeps
// storage.storeFlushWindowMs in virtual time (sim/clock_driver.hpp): sessions.json is written
// once the oldest change it lacks is a window old, not at the end of every step.
TEST_CASE("scenario: sessions.json follows the store's flush window in virtual time") {
  const std::string store = "agents/main/sessions/sessions.json";
  auto scenario = [&](const std::string& storage, const std::string& before, const std::string& after) {
    return R"({"name": "t", "start": "2026-03-28T20:00:00+01:00", "timeZone": "Europe/Berlin",
               "config": {"session": {"dmScope": "per-peer"})" + storage + R"(},
               "model": {"latency": {"kind": "fixed", "ms": 500}}, "steps": [
      {"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "hello"},
       "expect": {"ok": true, "files": {"absent": [")" + store + R"("]}}},
      {"id": "b", "advance": ")" + before + R"(", "expect": {"files": {"absent": [")" + store + R"("]}}},
      {"id": "c", "advance": ")" + after + R"(", "expect": {"files": {"exist": [")" + store + R"("]}}}]})";
  };
  SECTION("the default window with durability batch: 5 s") {
    auto out = run(scenario("", "3s", "2s"));
    for (const auto& f : out.failures) UNSCOPED_INFO(f);
    CHECK(out.failed == 0);
  }
  SECTION("a window set in the config") {
    auto out = run(scenario(R"(, "storage": {"storeFlushWindowMs": 60000})", "50s", "10s"));
    for (const auto& f : out.failures) UNSCOPED_INFO(f);
    CHECK(out.failed == 0);
  }
}

// With durability batch the pace also follows the file's size (actors/store/write_pace.hpp):
// sessions.json waits its size at storage.storeRewriteBytesPerSec between writes. A one-row
// file (~1 KB) at 100 bytes a second waits at least 10 s, not the 5 s window.
TEST_CASE("scenario: a larger sessions.json is written less often, at the rewrite rate, in virtual time") {
  auto scenario = [](const std::string& rate, const std::string& second_count, const std::string& third_count) {
    return R"({"name": "t", "start": "2026-03-28T20:00:00+01:00", "timeZone": "Europe/Berlin",
               "config": {"session": {"dmScope": "per-peer"}, "storage": {"storeRewriteBytesPerSec": )" +
           rate + R"(}},
               "model": {"latency": {"kind": "fixed", "ms": 500}}, "steps": [
      {"id": "a", "send": {"channel": "telegram", "peer": "1", "text": "hello"}},
      {"id": "b", "advance": "6s", "expect": {"eventCounts": {"store.flushed": 1}}},
      {"id": "c", "send": {"channel": "telegram", "peer": "2", "text": "hello"}},
      {"id": "d", "advance": "7s", "expect": {"eventCounts": {"store.flushed": )" +
           second_count + R"(}}},
      {"id": "e", "advance": "30s", "expect": {"eventCounts": {"store.flushed": )" +
           third_count + R"(}}}]})";
  };
  SECTION("at 100 bytes a second the second write waits past the 5 s window") {
    auto out = run(scenario("100", "0", "1"));
    for (const auto& f : out.failures) UNSCOPED_INFO(f);
    CHECK(out.failed == 0);
  }
  SECTION("without a rate it follows the window") {
    auto out = run(scenario("0", "1", "0"));
    for (const auto& f : out.failures) UNSCOPED_INFO(f);
    CHECK(out.failed == 0);
  }
}
