// chat_runs: a retry of a run whose turn failed is told the run's error (chat.send answers it
// as an UNAVAILABLE error), as OpenClaw's dedupe cache answers it; a run that succeeded or was
// aborted is a plain duplicate ("ok"); a run refused before its turn is forgotten (a retry runs).
#include <catch2/catch.hpp>

#include "gateway/chat_runs.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;

namespace {

void end_run(chat_runs& r, const std::string& id, status st, bool turn_ran = true) {
  turn_outcome o;
  o.st = std::move(st);
  o.turn_event = turn_ran;
  if (o.st.ok()) o.reply = "fine";
  REQUIRE(r.finish(id, std::move(o), false, [](const chat_runs::finished&) {}) == chat_runs::ack::sent);
}

}  // namespace

TEST_CASE("chat_runs: a retry of a failed run gets the run's error, not ok") {
  chat_runs r;
  REQUIRE_FALSE(r.begin("bad", "agent:main:main", "main").duplicate);
  auto running = r.begin("bad", "agent:main:main", "main");
  CHECK(running.duplicate);
  CHECK_FALSE(running.error);  // still running: no error yet
  end_run(r, "bad", status(errc::io_error, "model call failed: the model went away"));
  auto retry = r.begin("bad", "agent:main:main", "main");
  CHECK(retry.duplicate);
  CHECK_FALSE(retry.running);
  REQUIRE(retry.error);
  CHECK(*retry.error == "model call failed: the model went away");
  CHECK(r.open_count() == 0);  // nothing started
}

TEST_CASE("chat_runs: a retry of a run that succeeded or was aborted is a plain duplicate") {
  chat_runs r;
  REQUIRE_FALSE(r.begin("good", "k", "main").duplicate);
  end_run(r, "good", status());
  auto good = r.begin("good", "k", "main");
  CHECK(good.duplicate);
  CHECK_FALSE(good.error);
  REQUIRE_FALSE(r.begin("stopped", "k", "main").duplicate);
  end_run(r, "stopped", status(errc::cancelled, "the turn was cancelled (stop)"));
  auto stopped = r.begin("stopped", "k", "main");
  CHECK(stopped.duplicate);
  CHECK_FALSE(stopped.error);
}

TEST_CASE("chat_runs: a run refused before its turn is forgotten so that a retry runs") {
  chat_runs r;
  REQUIRE_FALSE(r.begin("moved", "k", "main").duplicate);
  end_run(r, "moved", status(errc::not_owner, "shard 3 is not served here"), /*turn_ran=*/false);
  auto retry = r.begin("moved", "k", "main");
  CHECK_FALSE(retry.duplicate);  // started anew
  CHECK(retry.run_id == "moved");
  CHECK(r.open_count() == 1);
  CHECK(r.begin("moved", "k", "main").duplicate);  // and remembered again
}
