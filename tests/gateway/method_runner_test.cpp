#include "gateway/method_runner.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using sessionrt::gateway::method_runner;

namespace {

// Jobs that wait until released, so a test holds them in flight as long as it likes.
struct gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void wait() {
    std::unique_lock lk(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lk, [&] { return open; });
  }
  void wait_entered(int n) {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return entered >= n; });
  }
  void release() {
    std::lock_guard lk(mu);
    open = true;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("method_runner: at most the limit run at once, the rest wait", "[gateway]") {
  gate g;
  std::mutex order_mu;
  std::vector<int> order;
  method_runner runner(3);
  for (int i = 0; i < 20; ++i)
    runner.post([&, i] {
      {
        std::lock_guard lk(order_mu);
        order.push_back(i);
      }
      g.wait();
    });
  g.wait_entered(3);
  CHECK(runner.running() == 3);
  CHECK(runner.waiting() == 17);
  g.release();
  runner.wait_idle();
  CHECK(runner.running() == 0);
  CHECK(runner.waiting() == 0);
  CHECK(runner.peak_running() == 3);
  REQUIRE(order.size() == 20);
}

TEST_CASE("method_runner: first come, first served", "[gateway]") {
  // One at a time, so the order they run in is the order they were taken from the queue.
  gate g;
  std::vector<int> order;
  method_runner runner(1);
  runner.post([&] { g.wait(); });
  for (int i = 0; i < 10; ++i) runner.post([&, i] { order.push_back(i); });
  g.wait_entered(1);
  CHECK(runner.waiting() == 10);
  g.release();
  runner.wait_idle();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("method_runner: each job runs on a fresh thread that ends with it", "[gateway]") {
  std::mutex mu;
  std::set<std::thread::id> ids;
  {
    method_runner runner(2);
    for (int i = 0; i < 50; ++i)
      runner.post([&] {
        std::lock_guard lk(mu);
        ids.insert(std::this_thread::get_id());
      });
    runner.wait_idle();
    CHECK(runner.peak_running() <= 2);
  }
  // Thread ids may be reused once a thread is joined, so fewer than 50 distinct ids is possible;
  // one long-lived worker would give at most 2.
  CHECK(ids.size() > 2);
  CHECK(ids.count(std::this_thread::get_id()) == 0);
}
