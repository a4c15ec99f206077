// The only source of time. Rules and storage take a clock&; nothing calls system_clock::now()
// directly. `now_ms` is wall-clock epoch milliseconds; `sleep_ms` is how waiting code (lock
// backoff) waits, so a manual clock makes waiting instantaneous in tests.
// The real clock lives in storage/system_clock.hpp (it makes syscalls).
#pragma once
#include <atomic>
#include <cstdint>

namespace sessionrt {

class clock {
 public:
  virtual ~clock() = default;
  virtual std::int64_t now_ms() const = 0;
  virtual void sleep_ms(std::int64_t ms) = 0;
};

// A clock that only moves when told to (or when someone sleeps on it). Thread-safe.
class manual_clock final : public clock {
 public:
  explicit manual_clock(std::int64_t start_ms = 0) : now_(start_ms) {}
  std::int64_t now_ms() const override { return now_.load(); }
  void sleep_ms(std::int64_t ms) override { advance(ms); }
  void set(std::int64_t ms) { now_.store(ms); }
  void advance(std::int64_t ms) { now_.fetch_add(ms); }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace sessionrt
