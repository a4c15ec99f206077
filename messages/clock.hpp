// The only source of time. Rules and storage take a clock&; nothing calls system_clock::now()
// directly. `now_ms` is wall-clock epoch milliseconds; `sleep_ms` is how waiting code (lock
// backoff) waits, so a manual clock makes waiting instantaneous in tests.
// `alarms` run a callback once the clock reaches a time (model timeouts, queue debounce, a
// simulated model's latency); under virtual time they fire while the manual clock advances.
// The real clock and its alarm thread live in storage/system_clock.hpp (they make syscalls).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace sessionrt {

class clock {
 public:
  virtual ~clock() = default;
  virtual std::int64_t now_ms() const = 0;
  virtual void sleep_ms(std::int64_t ms) = 0;
};

class alarms {
 public:
  using id = std::uint64_t;
  virtual ~alarms() = default;
  // Runs `fn` once, when the clock reads `at_ms` or later, on the alarms' own thread (a
  // manual clock: the thread that advances it). Must not block. cancel() of an alarm that
  // fired or was cancelled does nothing.
  virtual id at(std::int64_t at_ms, std::function<void()> fn) = 0;
  virtual void cancel(id alarm) = 0;
};

// The alarms waiting, in time order (not thread-safe: their owner locks). Shared by the manual
// clock and the real clock's alarm thread.
class alarm_queue {
 public:
  alarms::id add(std::int64_t at_ms, std::function<void()> fn);
  void cancel(alarms::id alarm);
  // The earliest alarm due at `now_ms` (removed), or an empty function.
  std::function<void()> pop_due(std::int64_t now_ms);
  // When the earliest alarm is due; nullopt when none waits.
  std::optional<std::int64_t> next_at() const;
  std::size_t size() const { return due_.size(); }

 private:
  std::map<std::pair<std::int64_t, alarms::id>, std::function<void()>> due_;
  std::unordered_map<alarms::id, std::int64_t> when_;  // alarm -> its time, for cancel()
  alarms::id next_ = 1;
};

// A clock that only moves when told to (or when someone sleeps on it), with alarms that fire
// as it passes them, in time order. Thread-safe.
class manual_clock final : public clock, public alarms {
 public:
  explicit manual_clock(std::int64_t start_ms = 0) : now_(start_ms) {}
  std::int64_t now_ms() const override { return now_.load(); }
  void sleep_ms(std::int64_t ms) override { advance(ms); }
  void set(std::int64_t ms) {
    now_.store(ms);
    fire_due();
  }
  void advance(std::int64_t ms) {
    now_.fetch_add(ms);
    fire_due();
  }
  id at(std::int64_t at_ms, std::function<void()> fn) override;
  void cancel(id alarm) override;
  std::size_t pending_alarms() const;

 private:
  void fire_due();
  std::atomic<std::int64_t> now_;
  mutable std::mutex mu_;
  alarm_queue queue_;
};

}  // namespace sessionrt
