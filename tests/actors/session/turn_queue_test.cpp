#include <catch2/catch.hpp>

#include "actors/session/turn_queue.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

TEST_CASE("turn_queue: collect merges waiting text messages, a system event keeps its place") {
  turn_queue q;
  queue_settings s;
  s.mode = queue_mode::collect;
  int answered = 0;
  auto chat = [&](std::string text) {
    queued_chat c;
    c.ev->text = std::move(text);
    c.sink = [&](turn_outcome) { ++answered; };
    return c;
  };
  (void)q.push(chat("a"), s);
  (void)q.push(chat("b"), s);
  q.push(system_event{});
  (void)q.push(chat("c"), s);
  auto w = q.pop(s);
  REQUIRE(w->chat);
  CHECK(w->chat->ev->text == "a\n\nb");
  CHECK(w->extra_sinks.size() == 1);
  CHECK(q.pop(s)->system.has_value());
  CHECK(q.pop(s)->chat->ev->text == "c");
  CHECK(q.empty());
}

TEST_CASE("turn_queue: past the cap, summarize drops the oldest and notes it for the next turn") {
  turn_queue q;
  queue_settings s;
  s.cap = 2;
  s.drop = queue_drop::summarize;
  auto chat = [](std::string text) {
    queued_chat c;
    c.ev->text = std::move(text);
    return c;
  };
  CHECK(q.push(chat("one"), s).empty());
  CHECK(q.push(chat("two"), s).empty());
  auto dropped = q.push(chat("three"), s);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].ev->text == "one");
  auto w = q.pop(s);
  CHECK(w->chat->ev->text == "two");
  CHECK(w->chat->ev->runtime_context.find("[Queue overflow] 1 earlier message(s)") == 0);
  CHECK(w->chat->ev->runtime_context.find("- one") != std::string::npos);
  CHECK(q.pop(s)->chat->ev->runtime_context.empty());
}

TEST_CASE("turn_queue: the row's queue fields override the config") {
  session_entry row;
  row.set_queue_mode("interrupt");
  row.set_queue_cap(3);
  row.set_queue_drop("new");
  const auto q = effective_queue(queue_settings{}, &row);
  CHECK(q.mode == queue_mode::interrupt);
  CHECK(q.cap == 3);
  CHECK(q.drop == queue_drop::new_first);
  row.set_queue_mode("bogus");
  CHECK(effective_queue(queue_settings{}, &row).mode == queue_mode::followup);
}
