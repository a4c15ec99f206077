#include <catch2/catch.hpp>

#include "actors/model/admission_queue.hpp"
#include "actors/session/ack_order.hpp"
#include "actors/session/turn_queue.hpp"
#include "messages/clock.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

TEST_CASE("admission_queue: the global bound admits first come first served") {
  admission_queue q(2, {});
  auto a = q.acquire("p"), b = q.acquire("p"), c = q.acquire("p"), d = q.acquire("p");
  CHECK(a.admitted);
  CHECK(b.admitted);
  CHECK_FALSE(c.admitted);
  CHECK_FALSE(d.admitted);
  CHECK(q.release(a.id) == std::vector<admission_queue::ticket>{c.id});
  CHECK(q.release(c.id) == std::vector<admission_queue::ticket>{d.id});
  CHECK(q.stats().peak_running == 2);
  CHECK(q.stats().admitted_late == 2);
}

TEST_CASE("admission_queue: a full provider does not hold back another provider, a waiter that gives up frees nothing") {
  admission_queue q(10, {{"slow", 1}});
  auto s1 = q.acquire("slow"), s2 = q.acquire("slow"), f1 = q.acquire("fast");
  CHECK(s1.admitted);
  CHECK_FALSE(s2.admitted);
  CHECK(f1.admitted);  // overtakes the waiting slow call
  CHECK(q.release(s2.id).empty());  // gave up while waiting
  CHECK(q.stats().waiting == 0);
  auto s3 = q.acquire("slow");
  CHECK_FALSE(s3.admitted);
  CHECK(q.release(s1.id) == std::vector<admission_queue::ticket>{s3.id});
}

TEST_CASE("admission_queue: bound 0 means none") {
  admission_queue q(0, {});
  for (int i = 0; i < 1000; ++i) CHECK(q.acquire("p").admitted);
}

TEST_CASE("turn_queue: collect merges waiting text messages, a system event keeps its place") {
  turn_queue q;
  queue_settings s;
  s.mode = queue_mode::collect;
  int answered = 0;
  auto chat = [&](std::string text) {
    queued_chat c;
    c.ev.text = std::move(text);
    c.sink = [&](turn_outcome) { ++answered; };
    return c;
  };
  (void)q.push(chat("a"), s);
  (void)q.push(chat("b"), s);
  q.push(system_event{});
  (void)q.push(chat("c"), s);
  auto w = q.pop(s);
  REQUIRE(w->chat);
  CHECK(w->chat->ev.text == "a\n\nb");
  CHECK(w->extra_sinks.size() == 1);
  CHECK(q.pop(s)->system.has_value());
  CHECK(q.pop(s)->chat->ev.text == "c");
  CHECK(q.empty());
}

TEST_CASE("turn_queue: past the cap, summarize drops the oldest and notes it for the next turn") {
  turn_queue q;
  queue_settings s;
  s.cap = 2;
  s.drop = queue_drop::summarize;
  auto chat = [](std::string text) {
    queued_chat c;
    c.ev.text = std::move(text);
    return c;
  };
  CHECK(q.push(chat("one"), s).empty());
  CHECK(q.push(chat("two"), s).empty());
  auto dropped = q.push(chat("three"), s);
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0].ev.text == "one");
  auto w = q.pop(s);
  CHECK(w->chat->ev.text == "two");
  CHECK(w->chat->ev.runtime_context.find("[Queue overflow] 1 earlier message(s)") == 0);
  CHECK(w->chat->ev.runtime_context.find("- one") != std::string::npos);
  CHECK(q.pop(s)->chat->ev.runtime_context.empty());
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

TEST_CASE("ack_order: a later turn's ack never overtakes an earlier one, a failed sync fails its outcome") {
  ack_order acks;
  std::vector<int> order;
  turn_outcome ok;
  ok.reply = "r";
  acks.push([&](turn_outcome) { order.push_back(1); }, ok, {5, 1, false});
  acks.push([&](turn_outcome) { order.push_back(2); }, ok, {0, 0, false});
  CHECK(acks.take_ready().empty());  // 2 is ready, 1 is not
  acks.synced(1, 4, "");
  CHECK(acks.take_ready().empty());
  acks.synced(1, 5, "EIO");
  auto ready = acks.take_ready();
  REQUIRE(ready.size() == 2);
  CHECK(ready[0].second.st.code() == errc::io_error);
  CHECK_FALSE(ready[0].second.reply.has_value());
  CHECK(ready[1].second.st.ok());
  for (auto& [sink, out] : ready) sink(out);
  CHECK(order == std::vector<int>{1, 2});
  CHECK(acks.empty());
}

TEST_CASE("manual_clock alarms fire in time order as the clock passes them, and cancel works") {
  manual_clock clk(1000);
  std::vector<int> fired;
  clk.at(3000, [&] { fired.push_back(3); });
  auto two = clk.at(2000, [&] { fired.push_back(2); });
  clk.at(2500, [&] { fired.push_back(25); });
  clk.cancel(two);
  clk.advance(1600);
  CHECK(fired == std::vector<int>{25});
  clk.advance(400);
  CHECK(fired == std::vector<int>{25, 3});
  CHECK(clk.pending_alarms() == 0);
}
