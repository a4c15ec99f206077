#include "messages/clock.hpp"

namespace sessionrt {

alarms::id alarm_queue::add(std::int64_t at_ms, std::function<void()> fn) {
  const alarms::id alarm = next_++;
  due_.emplace(std::make_pair(at_ms, alarm), std::move(fn));
  when_.emplace(alarm, at_ms);
  return alarm;
}

void alarm_queue::cancel(alarms::id alarm) {
  auto it = when_.find(alarm);
  if (it == when_.end()) return;
  due_.erase(std::make_pair(it->second, alarm));
  when_.erase(it);
}

std::function<void()> alarm_queue::pop_due(std::int64_t now_ms) {
  if (due_.empty() || due_.begin()->first.first > now_ms) return {};
  auto fn = std::move(due_.begin()->second);
  when_.erase(due_.begin()->first.second);
  due_.erase(due_.begin());
  return fn;
}

std::optional<std::int64_t> alarm_queue::next_at() const {
  if (due_.empty()) return std::nullopt;
  return due_.begin()->first.first;
}

alarms::id manual_clock::at(std::int64_t at_ms, std::function<void()> fn) {
  id alarm;
  {
    std::lock_guard<std::mutex> g(mu_);
    alarm = queue_.add(at_ms, std::move(fn));
  }
  if (at_ms <= now_ms()) fire_due();
  return alarm;
}

void manual_clock::cancel(id alarm) {
  std::lock_guard<std::mutex> g(mu_);
  queue_.cancel(alarm);
}

std::size_t manual_clock::pending_alarms() const {
  std::lock_guard<std::mutex> g(mu_);
  return queue_.size();
}

void manual_clock::fire_due() {
  // One at a time, outside the lock: an alarm may set another (which fires in this loop when
  // it is due already).
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> g(mu_);
      fn = queue_.pop_due(now_.load());
    }
    if (!fn) return;
    fn();
  }
}

}  // namespace sessionrt
