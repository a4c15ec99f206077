// System events checked like chat events (issue 17): a bad key or a cron job id that cannot
// name a session is refused naming it, a text over session.maxMessageBytes is refused naming
// the limit, nothing is stored for a refusal, and send(system_event) has a completion.
// Isolated heartbeats [R§1.1] run in <key>:heartbeat with heartbeatIsolatedBaseSessionKey.
#include <catch2/catch.hpp>

#include <filesystem>

#include "actors/router/session_key.hpp"
#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using sessionrt::testing::inbound;
using sessionrt::testing::lifecycle_harness;

TEST_CASE("system events: a bad session key is refused naming it and nothing is stored") {
  lifecycle_harness h;
  auto rt = h.start();
  system_event ev;
  ev.kind = system_event_kind::exec;
  ev.session_key = "agent:main:../../etc";
  ev.text = "build finished";
  turn_outcome out = rt->send(ev).get();
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message().find("agent:main:../../etc") != std::string::npos);
  auto rows = rt->sessions();
  REQUIRE(rows.ok());
  CHECK(rows->empty());  // not sent to the main session instead
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: a key of another agent than agent_id is refused naming both") {
  lifecycle_harness h;
  auto rt = h.start();
  system_event ev;
  ev.kind = system_event_kind::heartbeat;
  ev.session_key = "agent:ops:main";
  ev.agent_id = "main";
  turn_outcome out = rt->send(ev).get();
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message().find("\"ops\"") != std::string::npos);
  CHECK(out.st.message().find("\"main\"") != std::string::npos);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: a cron job id with a colon is refused") {
  lifecycle_harness h;
  auto rt = h.start();
  system_event ev;
  ev.kind = system_event_kind::cron;
  ev.job_id = "a:run:b";
  ev.text = "run";
  turn_outcome out = rt->send(ev).get();
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message().find("a:run:b") != std::string::npos);
  CHECK(rt->sessions()->empty());
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: a cron prompt over session.maxMessageBytes is refused naming the limit") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.session.max_message_bytes = 4096; });
  system_event ev;
  ev.kind = system_event_kind::cron;
  ev.job_id = "digest";
  ev.text = std::string(4097, 'x');
  turn_outcome out = rt->send(ev).get();
  CHECK(out.st.code() == errc::limit_exceeded);
  CHECK(out.st.message().find("session.maxMessageBytes (4096 bytes)") != std::string::npos);
  CHECK(out.st.message().find("4097") != std::string::npos);
  CHECK(rt->sessions()->empty());
  CHECK(h.model->calls().empty());
  // At the limit it runs.
  ev.text = std::string(4096, 'x');
  turn_outcome ran = rt->send(ev).get();
  CHECK(ran.st.ok());
  CHECK(ran.session_key == "agent:main:cron:digest");
  CHECK(h.model->calls().size() == 1);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: the completion comes once the notice is queued, and it reaches the next prompt") {
  lifecycle_harness h;
  auto rt = h.start();
  REQUIRE(rt->send(inbound("telegram", "111", "hello")).get().st.ok());
  system_event ev;
  ev.kind = system_event_kind::exec;
  ev.session_key = "main";  // a main alias
  ev.text = "Exec finished: make test (exit 0)";
  turn_outcome out = rt->send(ev).get();
  REQUIRE(out.st.ok());
  CHECK(out.session_key == "agent:main:main");
  CHECK(!out.session_id.empty());
  REQUIRE(rt->send(inbound("telegram", "111", "what happened?")).get().st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].last_user_text.find("Exec finished: make test (exit 0)") != std::string::npos);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: invalid UTF-8 in a notice is refused") {
  lifecycle_harness h;
  auto rt = h.start();
  system_event ev;
  ev.kind = system_event_kind::heartbeat;
  ev.text = "bad \xff byte";
  turn_outcome out = rt->send(ev).get();
  CHECK(out.st.code() == errc::invalid_argument);
  CHECK(out.st.message().find("UTF-8") != std::string::npos);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("system events: with isolatedSession a heartbeat runs as a turn in <key>:heartbeat") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.heartbeat_isolated_session = true; });
  REQUIRE(rt->send(inbound("telegram", "111", "hello")).get().st.ok());
  system_event ev;
  ev.kind = system_event_kind::heartbeat;
  ev.text = "Read HEARTBEAT.md and report anything urgent.";
  turn_outcome out = rt->send(ev).get();
  REQUIRE(out.st.ok());
  CHECK(out.session_key == "agent:main:main:heartbeat");
  REQUIRE(out.reply.has_value());
  auto row = rt->session("agent:main:main:heartbeat").value();
  REQUIRE(row.has_value());
  CHECK(row->heartbeat_isolated_base_session_key() == std::optional<std::string_view>("agent:main:main"));
  CHECK(actors::is_synthetic_key("agent:main:main:heartbeat"));  // maintenance may prune it [R§5.2]
  // The main session is untouched by it: its next prompt carries no heartbeat notice.
  REQUIRE(rt->send(inbound("telegram", "111", "next")).get().st.ok());
  auto calls = h.model->calls();
  REQUIRE(calls.size() == 3);
  CHECK(calls[1].last_user_text == "Read HEARTBEAT.md and report anything urgent.");
  CHECK(calls[2].last_user_text == "next");
  REQUIRE(rt->stop().ok());
}
