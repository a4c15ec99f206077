// simulated_model: the built-in deterministic model runner (SPEC §8) and compaction provider
// (SPEC §4) for the demo, the simulations, the tests and the benchmarks. No network, no randomness.
// - Same request and same clock reading -> byte-identical assistant message.
// - Prompt tokens = sum of actors::estimate_tokens over the request's messages + ceil(UTF-16
//   length of the system prompt / 4) [R§10], counted afresh on every call as a provider would:
//   an assistant usage inside the context is not reused (estimate_context_tokens would, and
//   after a compaction the kept tail's old usage would still report the pre-compaction size).
//   Without usage in the context both counts are equal.
// - Prompt tokens > options.context_window -> errc::limit_exceeded with Anthropic's overflow text
//   "prompt is too long: N tokens > W maximum" (is_context_overflow_error matches it). The
//   request's context_window is the runtime's belief and does not change the model's limit.
// - purpose "memory_flush", or a last user message containing "Pre-compaction memory flush" or
//   options.silent_marker -> the reply is exactly "NO_REPLY". purpose "compaction_summary" -> a
//   structured summary of the request's <conversation> block (simulated_summary.hpp, included
//   here with the compaction provider that shares it). An unknown purpose is
//   errc::invalid_argument. A reply longer than request.max_tokens (> 0) is cut, stopReason "length".
// - Streaming: when the request has on_text, the reply's text is handed to it in pieces of
//   options.stream_chunk_bytes bytes (pieces may split a UTF-8 character) before run() returns.
// - Usage: input = prompt tokens, output = estimate of the reply, no cache; cost in USD at the
//   per-token prices of the options (defaults $3 / $15 per million, fixed numbers).
// - Asynchronous (start()): the answer is computed at once and delivered after the latency
//   of options.latency (0: before start() returns), by the alarms of options.timers (nullptr:
//   the real clock's alarm thread; a manual_clock under virtual time). Streamed pieces are
//   delivered with the answer. A cancelled call completes at once with errc::cancelled and is
//   counted (counters().cancelled_calls). Latencies are drawn from a generator seeded with
//   latency.seed, in call order.
// - Thread-safe: run() and start() may be called concurrently from several threads; the knobs
//   and the counters are atomics or under a mutex. The clock must outlive the model.
#pragma once
#include <atomic>
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <optional>
#include <string>
#include <string_view>

#include "messages/clock.hpp"
#include "messages/model_runner.hpp"
#include "messages/status.hpp"
#include "runtime/simulated_summary.hpp"
#include "runtime/simulated_text.hpp"

namespace sessionrt::runtime {

// The first words of OpenClaw's default flush prompt and system prompt [R§7.1].
inline constexpr std::string_view kFlushPromptMarker = "Pre-compaction memory flush";

// How long a call takes, in the clock's time. fixed: ms. uniform: between min_ms and max_ms.
// lognormal: median ms, spread sigma (a long tail, as network models have), at most max_ms
// when max_ms > 0.
struct simulated_latency {
  enum class shape { fixed, uniform, lognormal } kind = shape::fixed;
  std::int64_t ms = 0;
  std::int64_t min_ms = 0, max_ms = 0;
  double sigma = 0.5;
  std::uint64_t seed = 1;
};

struct simulated_model_options {
  std::int64_t context_window = 200000;
  std::string provider = "sessionrt";  // used when the request names none
  std::string model = "sim-1";         // used when the request names none
  std::string api = "sim";
  std::int64_t reply_tokens = 60;      // approximate estimate of an ordinary reply
  std::string silent_marker = "[sim:silent]";  // a user message containing it gets NO_REPLY
  std::size_t stream_chunk_bytes = 12;          // piece size when the request streams (0: no streaming)
  double input_cost_per_token = 3.0 / 1'000'000;
  double output_cost_per_token = 15.0 / 1'000'000;
  simulated_latency latency;
  alarms* timers = nullptr;
};

// A snapshot of what the model has done since it was made.
struct simulated_model_counters {
  std::int64_t turn_calls = 0;
  std::int64_t memory_flush_calls = 0;
  std::int64_t compaction_summary_calls = 0;
  std::int64_t failed_calls = 0;       // every error returned (forced, overflow, bad purpose)
  std::int64_t forced_failures = 0;    // errors from fail_next
  std::int64_t window_overflows = 0;   // prompts larger than the context window
  std::int64_t input_tokens = 0;       // sums over successful calls
  std::int64_t output_tokens = 0;
  std::int64_t cancelled_calls = 0;    // start()ed calls the runtime cancelled before their answer
  std::int64_t in_flight = 0;          // start()ed calls not answered yet
  std::int64_t peak_in_flight = 0;
};

class simulated_model final : public model_runner, public async_model_runner {
 public:
  explicit simulated_model(clock& clock, simulated_model_options options = {});

  result<boost::json::object> run(const model_request& request) override;
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override;
  // The latency the next call gets (advances the generator).
  std::int64_t draw_latency_ms();
  // Later calls take this long (a test changes the model's speed between turns).
  void set_latency(simulated_latency latency);

  // The next `count` calls (any purpose) fail with `error_text`; count <= 0 cancels what is
  // pending. The code defaults to limit_exceeded for an overflow text, io_error otherwise.
  void fail_next(int count, std::string error_text, std::optional<errc> code = std::nullopt);

  simulated_model_counters counters() const;
  const simulated_model_options& options() const { return options_; }

 private:
  struct forced_failure {
    int remaining = 0;
    std::string text;
    errc code = errc::io_error;
  };

  std::optional<status> take_forced_failure();
  status failed(status error);
  void count_purpose(std::string_view purpose);
  result<boost::json::object> answer(const model_request& request, std::int64_t prompt_tokens);

  clock& clock_;
  const simulated_model_options options_;
  std::mutex failure_mutex_;
  // Prompt-token sums of the context prefix seen last time, per session: a session's context
  // grows by appends, so a call estimates only the new messages. Fingerprints of the first and
  // the last counted message detect a rewritten context (a compaction): then all is counted.
  struct prefix_sum {
    std::size_t count = 0;
    std::int64_t tokens = 0;
    std::uint64_t first_fingerprint = 0, last_fingerprint = 0;  // of msgs[0] and msgs[count - 1]
  };
  std::mutex prefix_mutex_;
  std::unordered_map<std::string, prefix_sum> prefixes_;
  std::int64_t prompt_tokens_of(const model_request& request);
  forced_failure forced_;
  std::atomic<std::int64_t> turn_calls_{0}, memory_flush_calls_{0}, compaction_summary_calls_{0};
  std::atomic<std::int64_t> failed_calls_{0}, forced_failures_{0}, window_overflows_{0};
  std::atomic<std::int64_t> input_tokens_{0}, output_tokens_{0};
  std::atomic<std::int64_t> cancelled_calls_{0}, in_flight_{0}, peak_in_flight_{0};
  std::mutex latency_mutex_;
  std::uint64_t latency_state_;
  simulated_latency latency_;  // under latency_mutex_
  result<boost::json::object> respond(const model_request& request,
                                      const std::function<void(std::string_view)>& on_text);
};

// Prompt tokens as the model counts them (see the contract above).
std::int64_t simulated_prompt_tokens(const model_request& request);

// "prompt is too long: <prompt_tokens> tokens > <context_window> maximum"
std::string simulated_overflow_text(std::int64_t prompt_tokens, std::int64_t context_window);

// The ordinary reply to a user text: a quote of its first words, a hash-based reference and
// fixed sentences until the estimate reaches about reply_tokens.
std::string simulated_reply_text(std::string_view user_text, std::int64_t reply_tokens);

}  // namespace sessionrt::runtime
