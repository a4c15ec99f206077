// simulated_summary: the deterministic compaction summary of the simulated model
// (simulated_model.hpp, purpose "compaction_summary") and of simulated_compaction_provider.
// Kept apart from the model because both must give the same summary for the same conversation
// (a run that compacts through either path writes the same transcript), and because its rules
// (which user lines become goals, constraints, done items) change for reasons of their own.
// - Pure and deterministic: the same source gives byte-identical text; no clock, no randomness.
// - A previous summary's goals, constraints, done items and decisions are carried into the next
//   (the oldest dropped past a cap), so a summary of a summary does not forget them.
// - The provider is thread-safe; its knobs (fail_with, return_empty, observe_steps) drive the
//   runtime's fallback paths in tests.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "messages/model_runner.hpp"
#include "messages/status.hpp"

namespace sessionrt::runtime {

// What the summarizer reads. `conversation` is pi's serialized form ("[User]: ...", see
// actors::serialize_conversation); `previous_summary` is an earlier summary whose Goal,
// Constraints, Done items and Key Decisions are carried; `focus` is the custom instructions.
struct summary_source {
  std::string_view conversation;
  std::string_view previous_summary;
  std::string_view focus;
  bool turn_prefix = false;  // answer the split-turn prefix prompt (## Original Request ...)
};

// The deterministic summary both the model and the provider give, with the headings of pi's
// summarization prompt [R§6.4], cut to max_tokens (<= 0: no limit) at a line when possible.
std::string simulated_summary(const summary_source& source, std::int64_t max_tokens);

// The summarizer's input taken from a compaction_summary request's user text (the layout of
// actors::history_summary_request / turn_prefix_summary_request). Views into `user_text`.
summary_source summary_source_of(std::string_view user_text);

// A compaction_provider over simulated_summary, with knobs for the runtime's fallback paths.
// `cancel` is checked before starting and between the steps (convert, serialize, summarize);
// when set, the answer is errc::cancelled. Thread-safe.
class simulated_compaction_provider final : public compaction_provider {
 public:
  using step_observer = std::function<void(std::string_view step)>;

  result<std::string> summarize(const summarize_request& request, const cancellation& cancel) override;

  // Every later call fails with `error` (an ok status means succeed()).
  void fail_with(status error);
  // Every later call returns "".
  void return_empty();
  // Back to ordinary summaries.
  void succeed();
  // Called after each step ("convert", "serialize", "summarize"), before the cancellation check.
  void observe_steps(step_observer observer);

  std::int64_t calls() const { return calls_.load(); }

 private:
  enum class mode { summarize, fail, empty };

  bool stop_after(std::string_view step, const cancellation& cancel);

  std::mutex mutex_;
  mode mode_ = mode::summarize;
  status error_;
  step_observer observer_;
  std::atomic<std::int64_t> calls_{0};
};

}  // namespace sessionrt::runtime
