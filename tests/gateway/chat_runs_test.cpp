// chat_runs: runs in flight, their streamed text and the idempotency keys seen.
#include <catch2/catch.hpp>

#include "gateway/chat_runs.hpp"
#include "gateway/param_check.hpp"

using namespace sessionrt::gateway;

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
  REQUIRE(r.finish("idem-1"));
  auto c = r.begin("idem-1", "agent:main:main", "main");
  CHECK(c.duplicate);
  CHECK_FALSE(c.running);
  CHECK(r.open_count() == 0);
}

TEST_CASE("chat_runs: pieces accumulate into the oldest open run of the session numbered from 1") {
  chat_runs r;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  auto d1 = r.on_piece("k", "Hello", false, 0);
  auto d2 = r.on_piece("k", " there", false, 1);
  REQUIRE(d1);
  REQUIRE(d2);
  CHECK(d1->run_id == "a");
  CHECK(d1->seq == 1);
  CHECK(d2->seq == 2);
  CHECK(d2->text == "Hello there");
  CHECK(d2->piece == " there");
  auto fin = r.finish("a");
  REQUIRE(fin);
  CHECK(fin->seq == 3);
  CHECK(fin->streamed == "Hello there");
  auto d3 = r.on_piece("k", "x", false, 0);
  REQUIRE(d3);
  CHECK(d3->run_id == "b");
  CHECK_FALSE(r.on_piece("other", "x", false));
}

TEST_CASE("chat_runs: a discarded attempt forgets its text") {
  chat_runs r;
  r.begin("a", "k", "main");
  r.on_piece("k", "draft", false, 0);
  CHECK_FALSE(r.on_piece("k", "", true));
  auto d = r.on_piece("k", "final", false, 0);
  REQUIRE(d);
  CHECK(d->text == "final");
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

TEST_CASE("chat_runs: a late piece of a finished run is not given to the next run") {
  chat_runs r;
  r.begin("a", "k", "main");
  r.begin("b", "k", "main");
  REQUIRE(r.on_piece("k", "one", false, 0));
  REQUIRE(r.finish("a"));
  CHECK_FALSE(r.on_piece("k", "late", false, 1));  // a's tail, arriving after its final
  auto d = r.on_piece("k", "two", false, 0);
  REQUIRE(d);
  CHECK(d->run_id == "b");
  CHECK(d->text == "two");
}
