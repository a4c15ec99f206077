#include "gateway/method_runner.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
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

TEST_CASE("method_runner: a thread takes the jobs waiting in turn and ends when none waits", "[gateway]") {
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  {
    method_runner runner(2);
    for (int i = 0; i < 50; ++i)
      runner.post([&] {
        open.wait();  // the first two hold their threads until all 50 are posted
        std::lock_guard lk(mu);
        ids.insert(std::this_thread::get_id());
      });
    CHECK(runner.waiting() == 48);
    gate.set_value();
    runner.wait_idle();
    CHECK(runner.running() == 0);
    CHECK(runner.peak_running() == 2);
  }
  CHECK(ids.size() == 2);  // the two threads ran all 50: no thread per job
  CHECK(ids.count(std::this_thread::get_id()) == 0);
}

// The bound on waiting jobs and the turn between keys (connections).

TEST_CASE("method_runner: try_post refuses past max_waiting, post still queues", "[method_runner]") {
  gate l;
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
  gate l;
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
