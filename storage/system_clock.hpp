// The real clock: epoch ms from the system clock; sleep_ms really sleeps. Its alarms run on
// one thread of their own (started on first use, stopped with the process or the object).
#pragma once
#include <condition_variable>
#include <memory>
#include <thread>

#include "messages/clock.hpp"

namespace sessionrt::storage {

class system_clock final : public clock {
 public:
  std::int64_t now_ms() const override;
  void sleep_ms(std::int64_t ms) override;
};

clock& real_clock();

// Alarms on a real clock: the wall clock by default; cluster::monotonic_alarms passes a clock
// that never goes back. Callbacks run on the alarm thread, one at a time, and must be short
// (send a message, complete a call). The clock outlives the object.
class real_time_alarms : public alarms {
 public:
  explicit real_time_alarms(clock& time = real_clock());
  ~real_time_alarms() override;
  id at(std::int64_t at_ms, std::function<void()> fn) override;
  void cancel(id alarm) override;
  std::size_t pending() const;

 private:
  void run();
  clock& time_;  // before thread_: the thread reads it
  mutable std::mutex mu_;
  std::condition_variable cv_;
  alarm_queue queue_;
  bool stopping_ = false;
  std::thread thread_;
};

// Process-wide instance (on the wall clock).
alarms& real_alarms();

}  // namespace sessionrt::storage
