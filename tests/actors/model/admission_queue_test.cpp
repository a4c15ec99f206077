#include <catch2/catch.hpp>

#include "actors/model/admission_queue.hpp"
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
