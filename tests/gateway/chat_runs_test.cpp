// chat_runs: runs in flight, their streamed text, their held closing events and the idempotency
// keys seen, what the bus says of a run joined to it by its runId; which turns make
// chat_delivery hold a closing event.
#include <catch2/catch.hpp>

#include "gateway/chat_delivery.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/param_check.hpp"
#include "messages/lifecycle_event.hpp"

using namespace sessionrt;
using namespace sessionrt::gateway;

namespace {

// What the callbacks were handed, in order: "delta:<run>:<seq>" / "close:<run>:<seq>".
struct recorder {
  std::vector<std::string> out;
  std::vector<chat_runs::delta> deltas;
  std::vector<chat_runs::finished> closed;
  chat_runs::delta_fn delta() {
    return [this](const chat_runs::delta& d) {
      out.push_back("delta:" + d.run_id + ":" + std::to_string(d.seq));
      deltas.push_back(d);
    };
  }
  chat_runs::closing_fn closing() {
    return [this](const chat_runs::finished& f) {
      out.push_back("close:" + f.run_id + ":" + std::to_string(f.seq));
      closed.push_back(f);
    };
  }
};

turn_outcome ok_reply(std::string text) {
  turn_outcome o;
  o.reply = std::move(text);
  return o;
}

// A frame sink that records the chat events and the held closings' timers.
struct recording_sink final : frame_sink {
  std::vector<boost::json::object> chat;
  std::vector<std::function<void()>> timers;
  void event_to(std::uint64_t, std::string, boost::json::value) override {}
  void broadcast(audience, std::string, boost::json::value) override {}
  bool has_audience(audience) const override { return false; }
  void to_session(std::uint64_t, std::string, std::string name, boost::json::value payload) override {
    if (name == "chat") chat.push_back(payload.as_object());
  }
  void after(std::chrono::milliseconds, std::function<void()> fn) override { timers.push_back(std::move(fn)); }
  void run_later(std::function<void()> fn) override { fn(); }
  std::vector<std::string> states() const {
    std::vector<std::string> out;
    for (const auto& c : chat)
      out.push_back(std::string(c.at("runId").as_string()) + ":" + std::string(c.at("state").as_string()));
    return out;
  }
};

lifecycle_event bus_event(std::string type, std::string run_id, boost::json::object data = {}) {
  lifecycle_event e;
  e.type = std::move(type);
  e.session_key = "k";
  if (!run_id.empty()) data["runId"] = run_id;
  e.data = std::move(data);
  return e;
}

}  // namespace

TEST_CASE("chat_runs: a second begin with the same idempotency key returns the first run and starts nothing") {
  chat_runs r;
  auto a = r.begin("idem-1", "agent:main:main", "main");
  CHECK_FALSE(a.duplicate);
  CHECK(a.run_id == "idem-1");
  auto b = r.begin("idem-1", "agent:main:main", "main");
  CHECK(b.duplicate);
  CHECK(b.running);
  CHECK(b.run_id == "idem-1");
  CHECK(r.open_count() == 1);
  recorder rec;
  REQUIRE(r.finish("idem-1", ok_reply("x"), false, rec.closing()) == chat_runs::ack::sent);
  auto c = r.begin("idem-1", "agent:main:main", "main");
  CHECK(c.duplicate);
  CHECK_FALSE(c.running);
  CHECK(r.open_count() == 0);
}

TEST_CASE("chat_runs: pieces accumulate into the run they name numbered from 1") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main", 7);
  r.begin("b", "k", "main", 8);
  r.on_piece("a", "Hello", false, rec.delta());
  r.on_piece("a", " there", false, rec.delta());
  REQUIRE(rec.deltas.size() == 2);
  CHECK(rec.deltas[0].run_id == "a");
  CHECK(rec.deltas[0].origin == 7);
  CHECK(rec.deltas[0].seq == 1);
  CHECK(rec.deltas[1].seq == 2);
  CHECK(rec.deltas[1].text == "Hello there");
  CHECK(rec.deltas[1].piece == " there");
  REQUIRE(r.finish("a", ok_reply("Hello there"), false, rec.closing()) == chat_runs::ack::sent);
  REQUIRE(rec.closed.size() == 1);
  CHECK(rec.closed[0].seq == 3);
  CHECK(rec.closed[0].streamed == "Hello there");
  CHECK(rec.closed[0].origin == 7);
  r.on_piece("b", "x", false, rec.delta());
  REQUIRE(rec.deltas.size() == 3);
  CHECK(rec.deltas[2].run_id == "b");
  CHECK(rec.deltas[2].origin == 8);
  r.on_piece("not-ours", "x", false, rec.delta());  // a cron turn, another host's run
  CHECK(rec.deltas.size() == 3);
}

TEST_CASE("chat_runs: the runs of one session stream at once without taking each other's pieces") {
  // The old join ("the session's oldest run") gave every piece to the first run.
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("b", "bee", false, rec.delta());
  r.on_piece("a", "ay", false, rec.delta());
  CHECK(rec.out == std::vector<std::string>{"delta:b:1", "delta:a:1"});
  CHECK(rec.deltas[0].text == "bee");
  CHECK(rec.deltas[1].text == "ay");
}

TEST_CASE("chat_runs: a discarded attempt forgets its text") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.on_piece("a", "draft", false, rec.delta());
  r.on_piece("a", "", true, rec.delta());
  CHECK(rec.deltas.size() == 1);
  r.on_piece("a", "final", false, rec.delta());
  REQUIRE(rec.deltas.size() == 2);
  CHECK(rec.deltas[1].text == "final");
}

TEST_CASE("chat_runs: an acknowledged run waits for its turn's end on the bus and its late deltas go first") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("a", "one", false, rec.delta());
  REQUIRE(r.finish("a", ok_reply("one two"), true, rec.closing()) == chat_runs::ack::held);
  CHECK(rec.closed.empty());
  CHECK(r.open_runs("k") == std::vector<std::string>{"b"});  // a held run is no longer in flight
  CHECK(r.held_count() == 1);
  r.on_piece("a", " two", false, rec.delta());  // a's tail, after its ack
  r.on_turn_end("b", rec.closing());            // b's end does not let a's closing go
  CHECK(rec.closed.empty());
  r.on_turn_end("a", rec.closing());
  r.on_piece("b", "three", false, rec.delta());  // b's turn ended on the bus: nothing more of it
  CHECK(rec.out == std::vector<std::string>{"delta:a:1", "delta:a:2", "close:a:3"});
  CHECK(rec.closed[0].streamed == "one two");
  CHECK(r.held_count() == 0);
  CHECK(r.finish("b", ok_reply("three"), true, rec.closing()) == chat_runs::ack::sent);  // its end came first
}

TEST_CASE("chat_runs: a turn end that comes through the bus before the ack lets the closing event go at once") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("a", "one", false, rec.delta());
  r.on_turn_end("a", rec.closing());
  r.on_piece("b", "two", false, rec.delta());  // b's turn already streams
  CHECK(r.finish("a", ok_reply("one"), true, rec.closing()) == chat_runs::ack::sent);
  CHECK(rec.out == std::vector<std::string>{"delta:a:1", "delta:b:1", "close:a:2"});
}

TEST_CASE("chat_runs: a held closing event goes when the bound expires and not twice") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  REQUIRE(r.finish("a", ok_reply("x"), true, rec.closing()) == chat_runs::ack::held);
  CHECK(r.expire("a", rec.closing()));
  CHECK_FALSE(r.expire("a", rec.closing()));
  r.on_turn_end("a", rec.closing());
  r.on_piece("a", "late", false, rec.delta());
  CHECK(rec.out == std::vector<std::string>{"close:a:1"});
  CHECK(r.finish("a", ok_reply("x"), true, rec.closing()) == chat_runs::ack::unknown);
}

TEST_CASE("chat_delivery: the closing event waits only for a turn that published its turn event") {
  // By the outcome's turn_event, never by its message: a refused message's text ("dropped by
  // /stop") and a failed call's ("model call failed: ...") decide nothing.
  gateway_metrics metrics;
  chat_runs runs;
  recording_sink sink;
  gateway_core core;
  core.metrics = &metrics;
  core.runs = &runs;
  core.sink = &sink;

  runs.begin("cmd", "k", "main");
  turn_outcome command;
  command.command = "/status";
  chat_acknowledged(core, "cmd", command);
  CHECK(sink.states() == std::vector<std::string>{"cmd:final"});

  runs.begin("ran", "k", "main");
  turn_outcome failed;
  failed.st = status(errc::io_error, "dropped by /stop");  // the text of a refusal, but the turn ran
  failed.turn_event = true;
  chat_reply_delta(core, bus_event("reply.delta", "ran", {{"text", "par"}, {"index", 0}}));
  chat_acknowledged(core, "ran", failed);
  CHECK(sink.states() == std::vector<std::string>{"cmd:final", "ran:delta"});
  REQUIRE(sink.timers.size() == 1);  // the safety bound, armed
  chat_reply_delta(core, bus_event("reply.delta", "ran", {{"text", "tial"}, {"index", 1}}));
  chat_turn_ended(core, bus_event("turn.failed", ""));      // names no run: not ours
  chat_turn_ended(core, bus_event("turn.failed", "other"));  // another run's
  CHECK(sink.states().size() == 3);
  chat_turn_ended(core, bus_event("turn.failed", "ran"));
  CHECK(sink.states() == std::vector<std::string>{"cmd:final", "ran:delta", "ran:delta", "ran:error"});
  CHECK(sink.chat[2].at("message").at("content").at(0).at("text") == "partial");
  sink.timers[0]();  // the bound passes after the closing went: nothing more
  CHECK(sink.states().size() == 4);
  CHECK(metrics.chat_holds_expired.load() == 0);
  CHECK(metrics.turns_failed.load() == 1);
}

TEST_CASE("param_check: messages name the field as the real server's do") {
  boost::json::object p{{"nokey", 1}};
  auto e = check_params("sessions.patch", p, {{"key", ptype::nonempty_string, true}}, true);
  REQUIRE(e);
  CHECK(e->message ==
        "invalid sessions.patch params: must have required property 'key'; at root: unexpected property 'nokey'");
  boost::json::object q{{"sessionKey", "k"}, {"message", 5}, {"idempotencyKey", "i"}};
  auto f = check_params("chat.send", q,
                        {{"sessionKey", ptype::nonempty_string, true}, {"message", ptype::string, true},
                         {"idempotencyKey", ptype::nonempty_string, true}});
  REQUIRE(f);
  CHECK(f->message == "invalid chat.send params: at /message: must be string");
  boost::json::object ok{{"limit", 3}};
  CHECK_FALSE(check_params("sessions.list", ok, {{"limit", ptype::positive_integer}}));
  boost::json::object zero{{"limit", 0}};
  CHECK(check_params("sessions.list", zero, {{"limit", ptype::positive_integer}}));
}

TEST_CASE("chat_runs: a late piece of a run sent without waiting is not given to the next run") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("a", "one", false, rec.delta());
  REQUIRE(r.finish("a", ok_reply("one"), false, rec.closing()) == chat_runs::ack::sent);
  r.on_piece("a", "late", false, rec.delta());  // a's tail, arriving after its final
  r.on_piece("b", "two", false, rec.delta());
  CHECK(rec.out == std::vector<std::string>{"delta:a:1", "close:a:2", "delta:b:1"});
  CHECK(rec.deltas.back().text == "two");
}
