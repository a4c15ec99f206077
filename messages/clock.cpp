#include "messages/clock.hpp"

#include <vector>

namespace sessionrt {

alarms::id manual_clock::at(std::int64_t at_ms, std::function<void()> fn) {
  id alarm;
  {
    std::lock_guard<std::mutex> g(mu_);
    alarm = next_++;
    due_.emplace(std::make_pair(at_ms, alarm), std::move(fn));
    when_.emplace(alarm, at_ms);
  }
  if (at_ms <= now_ms()) fire_due();
  return alarm;
}

void manual_clock::cancel(id alarm) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = when_.find(alarm);
  if (it == when_.end()) return;
  due_.erase(std::make_pair(it->second, alarm));
  when_.erase(it);
}

std::size_t manual_clock::pending_alarms() const {
  std::lock_guard<std::mutex> g(mu_);
  return due_.size();
}

void manual_clock::fire_due() {
  // One at a time, outside the lock: an alarm may set another (which fires in this loop when
  // it is due already).
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> g(mu_);
      if (due_.empty() || due_.begin()->first.first > now_.load()) return;
      fn = std::move(due_.begin()->second);
      when_.erase(due_.begin()->first.second);
      due_.erase(due_.begin());
    }
    fn();
  }
}

}  // namespace sessionrt
