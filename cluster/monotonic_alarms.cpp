#include "cluster/monotonic_alarms.hpp"

#include <chrono>

#include "cluster/monotonic_clock.hpp"

namespace sessionrt::cluster {

monotonic_alarms::monotonic_alarms() : thread_([this] { run(); }) {}

monotonic_alarms::~monotonic_alarms() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

alarms::id monotonic_alarms::at(std::int64_t at_ms, std::function<void()> fn) {
  std::lock_guard<std::mutex> g(mu_);
  const auto earliest = queue_.next_at();
  const id alarm = queue_.add(at_ms, std::move(fn));
  if (!earliest || at_ms < *earliest) cv_.notify_all();
  return alarm;
}

void monotonic_alarms::cancel(id alarm) {
  std::lock_guard<std::mutex> g(mu_);
  queue_.cancel(alarm);
}

void monotonic_alarms::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stopping_) {
    const auto next = queue_.next_at();
    if (!next) {
      cv_.wait(lk);
      continue;
    }
    const std::int64_t now = process_monotonic_clock().now_ms();
    if (*next > now) {
      cv_.wait_for(lk, std::chrono::milliseconds(*next - now));
      continue;
    }
    auto fn = queue_.pop_due(now);
    lk.unlock();
    fn();
    lk.lock();
  }
}

}  // namespace sessionrt::cluster
