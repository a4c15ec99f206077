#include "gateway/method_runner.hpp"

#include <algorithm>
#include <memory>
#include <system_error>

namespace sessionrt::gateway {

method_runner::method_runner(std::size_t limit, std::size_t max_waiting)
    : limit_(limit ? limit : 1), max_waiting_(max_waiting) {}

method_runner::~method_runner() { wait_idle(); }

bool method_runner::start_locked(std::function<void()>& job) {
  // Held apart from the thread's closure, so that a thread that cannot be made gives it back.
  auto held = std::make_shared<std::function<void()>>(std::move(job));
  try {
    threads_.emplace_back([this, held] { run(std::move(*held)); });
  } catch (const std::system_error&) {
    job = std::move(*held);
    return false;
  }
  ++running_;
  peak_ = std::max(peak_, running_);
  return true;
}

std::function<void()> method_runner::pop_locked() {
  const std::uint64_t key = turn_.front();
  turn_.pop_front();
  auto it = queues_.find(key);
  std::function<void()> job = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) queues_.erase(it);
  else turn_.push_back(key);  // its next job waits for the other keys' turn
  --waiting_;
  return job;
}

void method_runner::post(std::function<void()> job, std::uint64_t key) { (void)post_impl(job, key, false); }

bool method_runner::try_post(std::function<void()>& job, std::uint64_t key) { return post_impl(job, key, true); }

bool method_runner::post_impl(std::function<void()>& job, std::uint64_t key, bool bounded) {
  join_exited();
  std::unique_lock lk(mu_);
  if (running_ < limit_ && waiting_ == 0) {
    if (start_locked(job)) return true;
    if (running_ == 0) {
      // No thread could be made and none will finish to take it: run it here rather than lose it.
      lk.unlock();
      std::function<void()> now = std::move(job);
      now();
      return true;
    }
  }
  if (bounded && waiting_ >= max_waiting_) return false;
  auto& q = queues_[key];
  if (q.empty()) turn_.push_back(key);
  q.push_back(std::move(job));
  ++waiting_;
  peak_waiting_ = std::max(peak_waiting_, waiting_);
  return true;
}

void method_runner::run(std::function<void()> job) {
  for (;;) {
    job();
    job = nullptr;  // what it captured goes before the lock is taken
    std::lock_guard lk(mu_);
    if (waiting_ > 0) {
      job = pop_locked();  // this thread takes the next job in turn
      continue;
    }
    --running_;
    exited_.push_back(std::this_thread::get_id());
    idle_.notify_all();
    return;
  }
}

void method_runner::join_exited() {
  std::vector<std::thread> done;
  {
    std::lock_guard lk(mu_);
    for (auto id : exited_) {
      auto it = std::find_if(threads_.begin(), threads_.end(), [&](const std::thread& t) { return t.get_id() == id; });
      if (it == threads_.end()) continue;
      done.push_back(std::move(*it));
      threads_.erase(it);
    }
    exited_.clear();
  }
  for (auto& t : done) t.join();  // each has returned or is returning from run()
}

void method_runner::wait_idle() {
  {
    std::unique_lock lk(mu_);
    idle_.wait(lk, [&] { return running_ == 0 && waiting_ == 0; });
  }
  join_exited();
}

std::size_t method_runner::running() const {
  std::lock_guard lk(mu_);
  return running_;
}

std::size_t method_runner::waiting() const {
  std::lock_guard lk(mu_);
  return waiting_;
}

std::size_t method_runner::peak_running() const {
  std::lock_guard lk(mu_);
  return peak_;
}

std::size_t method_runner::peak_waiting() const {
  std::lock_guard lk(mu_);
  return peak_waiting_;
}

}  // namespace sessionrt::gateway
