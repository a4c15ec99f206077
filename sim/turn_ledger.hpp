// turn_ledger: what a simulation knows about the turns it sent, shared by the engine's parts.
// - In flight: how many turns, and per predicted session key, still wait for their answer
//   (the clock driver asks which keys are waiting on something other than the model).
// - Acknowledged: per session key the session id and the last kAckedKept texts whose turn
//   was acknowledged (the crash drill checks them in the transcripts after a restart).
// - Progress: a counter every answer and every lifecycle event bumps, with a condition
//   variable to wait on it; and the count of answers and events that may change a row (the
//   clock driver owes sessions.json a write once it moved).
// Thread-safe: answers and events come from the runtime's threads, the rest from the driver.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "runtime/runtime.hpp"

namespace sessionrt::sim {

struct acked_session {
  std::string session_id;
  std::deque<std::string> texts;
  std::int64_t count = 0;
};

class turn_ledger {
 public:
  // Acknowledged texts kept per session for the crash checks (the recent ones are the ones a
  // power loss can take).
  static constexpr std::size_t kAckedKept = 16;

  void sent(const std::string& key);
  // The answer of a turn sent for `key` with `text`; counts it failed or acknowledged.
  void answered(const std::string& key, const std::string& text, const turn_outcome& out);
  // After `answered` and the sender's own callback: the answer is progress and may change a row.
  void answer_done() { note(true); }
  // A lifecycle event: progress; `touches_rows` when it may change a row.
  void event(bool touches_rows) { note(touches_rows); }

  std::uint64_t progress() const { return progress_.load(); }
  std::uint64_t rows_touched() const { return rows_touched_.load(); }
  // Waits up to `wall` for `done` to hold (checked at each progress); whether it held.
  bool wait_for(std::chrono::milliseconds wall, const std::function<bool()>& done);

  std::int64_t inflight() const;
  std::int64_t failed_turns() const;
  // Session keys with a turn in flight for which `pred` holds.
  std::size_t keys_in_flight(const std::function<bool(const std::string&)>& pred) const;
  std::map<std::string, acked_session> acked() const;
  // A power cut: the dead runtime answered (or dropped) every turn in flight.
  void forget_inflight();

 private:
  void note(bool touches_rows);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<std::uint64_t> progress_{0}, rows_touched_{0};
  std::int64_t inflight_ = 0, failed_turns_ = 0;
  std::map<std::string, int> inflight_keys_;
  std::map<std::string, acked_session> acked_;
};

}  // namespace sessionrt::sim
