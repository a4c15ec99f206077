#include "cluster/monotonic_alarms.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "cluster/monotonic_clock.hpp"

namespace sessionrt::cluster {

TEST_CASE("monotonic alarms: fire in time order on the monotonic clock, cancelled ones never", "[cluster][membership]") {
  monotonic_alarms alarms;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> fired;
  auto record = [&](int n) {
    return [&, n] {
      std::lock_guard g(mu);
      fired.push_back(n);
      cv.notify_all();
    };
  };
  const std::int64_t now = process_monotonic_clock().now_ms();
  alarms.at(now + 30, record(3));
  const auto cancelled = alarms.at(now + 10, record(99));
  alarms.at(now + 20, record(2));
  alarms.at(now, record(1));  // due already
  alarms.cancel(cancelled);
  std::unique_lock g(mu);
  REQUIRE(cv.wait_for(g, std::chrono::seconds(10), [&] { return fired.size() == 3; }));
  CHECK(fired == std::vector<int>{1, 2, 3});
  CHECK(process_monotonic_clock().now_ms() >= now + 30);
}

}  // namespace sessionrt::cluster
