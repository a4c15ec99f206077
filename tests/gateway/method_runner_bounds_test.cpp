// method_runner's bound on waiting jobs and its turn between keys (connections).
#include "gateway/method_runner.hpp"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <vector>

using sessionrt::gateway::method_runner;

namespace {

struct latch {
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

TEST_CASE("method_runner: try_post refuses past max_waiting, post still queues", "[method_runner]") {
  latch l;
  method_runner runner(1, 2);
  runner.post([&] { l.wait(); });
  l.wait_entered(1);
  std::function<void()> job = [] {};
  CHECK(runner.try_post(job, 1));
  job = [] {};
  CHECK(runner.try_post(job, 2));
  job = [] {};
  CHECK_FALSE(runner.try_post(job, 3));
  CHECK(job);  // given back to the caller
  runner.post([] {}, 3);  // the gateway's own jobs are never refused
  CHECK(runner.waiting() == 3);
  CHECK(runner.peak_waiting() == 3);
  l.release();
  runner.wait_idle();
  CHECK(runner.waiting() == 0);
}

TEST_CASE("method_runner: keys are served in turn, one key's backlog does not hold up another", "[method_runner]") {
  latch l;
  std::mutex mu;
  std::vector<int> order;
  method_runner runner(1);
  runner.post([&] { l.wait(); }, 1);
  l.wait_entered(1);
  // Key 1 floods 100 jobs, then key 2 sends one: it runs second, not 101st.
  for (int i = 0; i < 100; ++i)
    runner.post([&, i] {
      std::lock_guard lk(mu);
      order.push_back(i);
    }, 1);
  runner.post([&] {
    std::lock_guard lk(mu);
    order.push_back(-2);
  }, 2);
  l.release();
  runner.wait_idle();
  REQUIRE(order.size() == 101);
  CHECK(order[0] == 0);
  CHECK(order[1] == -2);
  // Within a key, first come first served.
  for (std::size_t i = 2; i < order.size(); ++i) CHECK(order[i] == static_cast<int>(i) - 1);
}
