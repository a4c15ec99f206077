#include "gateway/method_runner.hpp"

#include <algorithm>
#include <memory>
#include <system_error>

namespace sessionrt::gateway {

method_runner::method_runner(std::size_t limit) : limit_(limit ? limit : 1) {}

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

void method_runner::post(std::function<void()> job) {
  join_exited();
  std::unique_lock lk(mu_);
  if (running_ < limit_ && waiting_.empty()) {
    if (start_locked(job)) return;
    if (running_ == 0) {
      // No thread could be made and none will finish to take it: run it here rather than lose it.
      lk.unlock();
      job();
      return;
    }
  }
  waiting_.push_back(std::move(job));
}

void method_runner::run(std::function<void()> job) {
  for (;;) {
    job();
    job = nullptr;  // what it captured goes before the lock is taken
    std::lock_guard lk(mu_);
    if (!waiting_.empty()) {
      // A fresh thread for the next job (see the header); this one ends.
      std::function<void()> next = std::move(waiting_.front());
      waiting_.pop_front();
      --running_;
      if (!start_locked(next)) {
        ++running_;  // no thread: this one runs it after all
        job = std::move(next);
        continue;
      }
    } else {
      --running_;
    }
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
    idle_.wait(lk, [&] { return running_ == 0 && waiting_.empty(); });
  }
  join_exited();
}

std::size_t method_runner::running() const {
  std::lock_guard lk(mu_);
  return running_;
}

std::size_t method_runner::waiting() const {
  std::lock_guard lk(mu_);
  return waiting_.size();
}

std::size_t method_runner::peak_running() const {
  std::lock_guard lk(mu_);
  return peak_;
}

}  // namespace sessionrt::gateway
