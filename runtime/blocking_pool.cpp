#include "runtime/blocking_pool.hpp"

#include <thread>

namespace sessionrt::runtime {

struct blocking_pool::shared {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stopping = false;
};

blocking_pool::blocking_pool(std::size_t threads) : state_(std::make_shared<shared>()), threads_(threads ? threads : 1) {
  for (std::size_t i = 0; i < threads_; ++i)
    std::thread([s = state_] {
      std::unique_lock<std::mutex> lk(s->mu);
      for (;;) {
        s->cv.wait(lk, [&] { return s->stopping || !s->jobs.empty(); });
        if (s->stopping) return;
        auto job = std::move(s->jobs.front());
        s->jobs.pop_front();
        lk.unlock();
        job();
        job = nullptr;  // what the job captured goes before the lock is taken again
        lk.lock();
      }
    }).detach();
}

blocking_pool::~blocking_pool() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->stopping = true;
    dropped.swap(state_->jobs);
  }
  state_->cv.notify_all();
}

void blocking_pool::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> g(state_->mu);
    if (state_->stopping) return;
    state_->jobs.push_back(std::move(job));
  }
  state_->cv.notify_one();
}

std::size_t blocking_pool::waiting() const {
  std::lock_guard<std::mutex> g(state_->mu);
  return state_->jobs.size();
}

}  // namespace sessionrt::runtime
