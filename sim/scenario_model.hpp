// scenario_model: the simulation's model runner. It answers with runtime::simulated_model's
// deterministic replies and adds what a scenario asks for: a latency in virtual time, and
// failure and overflow rates.
// - Determinism: each call's latency and fate are drawn from (seed, session key, the key's call
//   number), never from a shared stream, so the order in which concurrent sessions reach the
//   model does not change any draw. The answer is delivered by an alarm of the manual clock
//   at start time + latency (at once for a latency of 0).
// - A failure is errc::io_error "simulated model failure"; an overflow (turn calls only) is the
//   simulated model's own "prompt is too long" text, so the runtime compacts and retries.
// - Bookkeeping the engine waits on: which session keys have a call waiting for its alarm, and
//   when the next alarm is due (so virtual time can stop exactly there).
// Thread-safe: start() runs on the runtime's threads, alarms on the thread that advances.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "messages/model_runner.hpp"
#include "runtime/simulated_model.hpp"
#include "sim/scenario.hpp"

namespace sessionrt::sim {

struct model_call_record {
  std::int64_t at_ms = 0;
  bool failed = false;
};

class scenario_model final : public async_model_runner {
 public:
  scenario_model(manual_clock& clock, const model_spec& spec, std::uint64_t seed);

  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override;

  bool waiting_on(const std::string& session_key) const;
  std::optional<std::int64_t> next_due_ms() const;
  std::int64_t started() const { return started_.load(); }
  std::int64_t failures() const { return failures_.load(); }
  std::int64_t overflows() const { return overflows_.load(); }
  // Calls started since the last take, with their start times (for the report's buckets).
  std::vector<model_call_record> take_calls();

 private:
  struct pending_call {
    std::string key;
    std::int64_t due = 0;
  };
  std::int64_t draw_latency(std::uint64_t h) const;
  void finished(std::uint64_t call);

  manual_clock& clock_;
  model_spec spec_;
  std::uint64_t seed_;
  runtime::simulated_model inner_;
  mutable std::mutex mu_;
  std::map<std::string, std::uint64_t> calls_by_key_;
  std::map<std::uint64_t, pending_call> pending_;
  std::multiset<std::int64_t> due_;
  std::map<std::string, int> waiting_keys_;
  std::vector<model_call_record> records_;
  std::uint64_t next_call_ = 1;
  std::atomic<std::int64_t> started_{0}, failures_{0}, overflows_{0};
};

}  // namespace sessionrt::sim
