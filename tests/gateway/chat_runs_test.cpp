// chat_runs: runs in flight, their streamed text, their held closing events and the idempotency
// keys seen; which turns make chat_delivery hold a closing event.
#include <catch2/catch.hpp>

#include "gateway/chat_delivery.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/param_check.hpp"

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

TEST_CASE("chat_runs: pieces accumulate into the oldest open run of the session numbered from 1") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main", 7);
  r.begin("b", "k", "main", 8);
  r.on_piece("k", "Hello", false, 0, rec.delta());
  r.on_piece("k", " there", false, 1, rec.delta());
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
  r.on_piece("k", "x", false, 0, rec.delta());
  REQUIRE(rec.deltas.size() == 3);
  CHECK(rec.deltas[2].run_id == "b");
  r.on_piece("other", "x", false, 0, rec.delta());
  CHECK(rec.deltas.size() == 3);
}

TEST_CASE("chat_runs: a discarded attempt forgets its text") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.on_piece("k", "draft", false, 0, rec.delta());
  r.on_piece("k", "", true, 1, rec.delta());
  CHECK(rec.deltas.size() == 1);
  r.on_piece("k", "final", false, 0, rec.delta());
  REQUIRE(rec.deltas.size() == 2);
  CHECK(rec.deltas[1].text == "final");
}

TEST_CASE("chat_runs: an acknowledged run waits for its turn's end on the bus and its late deltas go first") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("k", "one", false, 0, rec.delta());
  REQUIRE(r.finish("a", ok_reply("one two"), true, rec.closing()) == chat_runs::ack::held);
  CHECK(rec.closed.empty());
  CHECK(r.open_runs("k") == std::vector<std::string>{"b"});  // a held run is no longer in flight
  CHECK(r.held_count() == 1);
  r.on_piece("k", " two", false, 1, rec.delta());  // a's tail, after its ack
  r.on_turn_end("k", rec.closing());
  r.on_piece("k", "three", false, 0, rec.delta());  // b's
  CHECK(rec.out == std::vector<std::string>{"delta:a:1", "delta:a:2", "close:a:3", "delta:b:1"});
  CHECK(rec.closed[0].streamed == "one two");
  CHECK(r.held_count() == 0);
}

TEST_CASE("chat_runs: a turn end that comes through the bus before the ack lets the closing event go at once") {
  chat_runs r;
  recorder rec;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  r.on_piece("k", "one", false, 0, rec.delta());
  r.on_turn_end("k", rec.closing());
  r.on_piece("k", "two", false, 0, rec.delta());  // b's turn already streams
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
  r.on_turn_end("k", rec.closing());
  r.on_piece("k", "late", false, 1, rec.delta());
  CHECK(rec.out == std::vector<std::string>{"close:a:1"});
  CHECK(r.finish("a", ok_reply("x"), true, rec.closing()) == chat_runs::ack::unknown);
}

TEST_CASE("chat_delivery: only a turn that called the model waits for its turn event") {
  turn_outcome ok;
  CHECK(turn_ran_model(ok));
  turn_outcome command;
  command.command = "/status";
  CHECK_FALSE(turn_ran_model(command));
  turn_outcome failed;
  failed.st = status(errc::io_error, "model call failed: boom");
  CHECK(turn_ran_model(failed));
  turn_outcome cancelled;
  cancelled.st = status(errc::cancelled, "the turn was cancelled (/stop)");
  CHECK(turn_ran_model(cancelled));
  turn_outcome dropped;
  dropped.st = status(errc::cancelled, "dropped by /stop");
  CHECK_FALSE(turn_ran_model(dropped));
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
  r.on_piece("k", "one", false, 0, rec.delta());
  REQUIRE(r.finish("a", ok_reply("one"), false, rec.closing()) == chat_runs::ack::sent);
  r.on_piece("k", "late", false, 1, rec.delta());  // a's tail, arriving after its final
  r.on_piece("k", "two", false, 0, rec.delta());
  CHECK(rec.out == std::vector<std::string>{"delta:a:1", "close:a:2", "delta:b:1"});
  CHECK(rec.deltas.back().text == "two");
}
