#include "storage/system_clock.hpp"

#include <chrono>
#include <thread>

namespace sessionrt::storage {

std::int64_t system_clock::now_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void system_clock::sleep_ms(std::int64_t ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

clock& real_clock() {
  static system_clock instance;
  return instance;
}

real_time_alarms::real_time_alarms(clock& time) : time_(time), thread_([this] { run(); }) {}

real_time_alarms::~real_time_alarms() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

alarms::id real_time_alarms::at(std::int64_t at_ms, std::function<void()> fn) {
  std::lock_guard<std::mutex> g(mu_);
  const auto earliest = queue_.next_at();
  const id alarm = queue_.add(at_ms, std::move(fn));
  if (!earliest || at_ms < *earliest) cv_.notify_all();
  return alarm;
}

void real_time_alarms::cancel(id alarm) {
  std::lock_guard<std::mutex> g(mu_);
  queue_.cancel(alarm);
}

std::size_t real_time_alarms::pending() const {
  std::lock_guard<std::mutex> g(mu_);
  return queue_.size();
}

void real_time_alarms::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stopping_) {
    const auto next = queue_.next_at();
    if (!next) {
      cv_.wait(lk);
      continue;
    }
    const std::int64_t now = time_.now_ms();
    if (*next > now) {
      // Millisecond resolution is what the callers ask for; wait_for on the steady clock, as
      // the wall clock may jump.
      cv_.wait_for(lk, std::chrono::milliseconds(*next - now));
      continue;
    }
    auto fn = queue_.pop_due(now);
    lk.unlock();
    fn();
    lk.lock();
  }
}

alarms& real_alarms() {
  static real_time_alarms instance;
  return instance;
}

}  // namespace sessionrt::storage
