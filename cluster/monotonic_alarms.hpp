// monotonic_alarms: alarms on monotonic_clock's time (storage::real_time_alarms runs on the
// wall clock, which an operator or NTP may set back: a lease's keepalives must not wait for
// it). One thread of its own; callbacks run there, one at a time, and must be short.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

#include "messages/clock.hpp"

namespace sessionrt::cluster {

class monotonic_alarms final : public alarms {
 public:
  monotonic_alarms();
  ~monotonic_alarms() override;
  id at(std::int64_t at_ms, std::function<void()> fn) override;  // at_ms on monotonic_clock
  void cancel(id alarm) override;

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  alarm_queue queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sessionrt::cluster
