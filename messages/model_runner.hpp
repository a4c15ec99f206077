// The model runner a host supplies (SPEC §8): given the sanitized context of a session, it
// answers one assistant message (pi-ai shape, with usage) or an error. A context-overflow
// error is an error whose message matches the overflow patterns [R§6.2]; the runtime then
// compacts and retries.
//
// Two contracts; the runtime prefers the first:
//   async_model_runner::start(request, done, cancel) returns at once; the runner completes
//     `done` later, exactly once, from any thread. The runtime never blocks a thread on it.
//   model_runner::run(request) is synchronous; the runtime runs it on a pool of its own
//     (model.syncRunnerThreads threads), never on the actor scheduler.
// What the runtime owns and what the runner may keep:
//   - `request` is shared and immutable; the runner may hold it as long as it likes.
//   - on_text pieces (streaming) may come from any thread, in order, before the completion;
//     the pieces joined must equal the text of the completed message — or, in a tool loop, the
//     texts of the rounds reported through on_message followed by the completed message's.
//   - `cancel` is set when the runtime gives up on the call (/stop, an interrupting message,
//     model.timeoutMs, stop()). The runtime stops waiting at once: what the runner completes
//     afterwards is ignored, and nothing of a cancelled reply is stored.
//   - A second completion is ignored (and counted: model_completion::duplicates()).
// Compaction providers (SPEC §4) summarize a span of messages; register them by id. Their
// summarize() is synchronous and runs on the same pool as a synchronous runner.
#pragma once
#include <atomic>
#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt {

// Messages a user sent while a call runs, for a runner that can take them at its next tool
// boundary (queue mode steer). Thread-safe.
class steer_inbox {
 public:
  // What arrived since the last take(), oldest first; the runner must use every text it takes
  // (the runtime stores them as user messages ahead of the reply).
  std::vector<std::string> take();
  void put(std::string text);
  // After close() put() refuses (false) and take() gives nothing: the call ended.
  bool try_put(std::string text);
  std::vector<std::string> close();
  // Texts taken by the runner so far, in order (read by the runtime after the completion).
  std::vector<std::string> taken() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> waiting_, taken_;
  bool closed_ = false;
};

// The mid-turn precheck (SPEC §7, compaction.midTurnPrecheck, off by default): inside a tool
// loop, after a tool result and before its next model call, a runner asks whether the context
// still fits. `added` is what the runner appended to the request's messages since it started
// (assistant tool calls, tool results). Thread-safe and cheap (no I/O): call it from any
// thread, as often as the loop turns.
//   fits                   go on
//   truncate_tool_results  cut each tool result in `added` to max_tool_result_chars, then go on
//   compact                stop and complete with an error whose message starts with
//                          "context overflow:" — the runtime compacts and retries the turn
struct precheck_answer {
  enum class verdict { fits, truncate_tool_results, compact } what = verdict::fits;
  std::int64_t context_tokens = 0;  // the estimate of the request plus `added`
  std::int64_t threshold = 0;       // context window - reserve
  std::size_t max_tool_result_chars = 0;
};
class context_precheck {
 public:
  virtual ~context_precheck() = default;
  virtual precheck_answer check(const boost::json::array& added) const = 0;
};

struct model_request {
  std::string session_key;
  std::string session_id;
  std::string purpose = "turn";  // turn | memory_flush | compaction_summary
  std::string system_prompt;
  boost::json::array messages;   // context messages, oldest first (pi's buildSessionContext shape)
  std::string provider;          // "" = the runner's default
  std::string model;
  std::string api;               // the model's API as configured ("" = unknown)
  std::int64_t context_window = 0;
  std::int64_t max_tokens = 0;   // 0 = runner default
  // "provider/model" refs a runner may try, in order, when the model fails terminally
  // (bad key, unknown model, retries exhausted, a server-given wait past the limit).
  std::vector<std::string> fallbacks;
  // Model calls one turn may make in a tool loop (agents.defaults.maxToolIterations; 0 = the
  // runner's default).
  int max_tool_iterations = 0;
  // Set by the runtime for a turn: a runner that runs a tool loop reports each message it
  // completed before its final reply, in order (the assistant message with its tool calls,
  // then each tool result), from any thread and before the completion. The runtime appends
  // each to the transcript as it comes, so a crash mid-loop keeps the finished rounds. Report
  // a round once its tool results are all in: the transcript never holds a tool call without
  // its result.
  std::function<void(boost::json::object message)> on_message;
  // Set by the runtime: a runner that moves to a fallback model says so (any thread, before
  // the completion); the runtime publishes a model.fallback event.
  std::function<void(std::string from, std::string to, std::string reason)> on_fallback;
  // Set when someone listens to the reply as it streams: call it with the reply's text in
  // order (any thread) before completing. A runner may ignore it.
  std::function<void(std::string_view text)> on_text;
  // Set for a turn when the session's queue mode is steer and the runner supports steering.
  std::shared_ptr<steer_inbox> steering;
  // Set for a turn when compaction.midTurnPrecheck is on (see context_precheck).
  std::shared_ptr<const context_precheck> precheck;
};

// Set by the runtime to ask a running call or summarization to stop. Thread-safe; callbacks
// run once, on the thread that cancels (at once when registered after the cancellation).
class cancellation {
 public:
  void cancel();
  bool cancelled() const { return cancelled_.load(); }
  void on_cancel(std::function<void()> fn) const;  // const: a runner holds a const view

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  mutable std::vector<std::function<void()>> callbacks_;
};

// The completion of one model call.
class model_completion {
 public:
  using sink = std::function<void(result<boost::json::object>)>;
  explicit model_completion(sink s) : sink_(std::move(s)) {}
  // The first call delivers `reply` and returns true; every later one is ignored (false).
  bool complete(result<boost::json::object> reply);
  bool completed() const { return done_.load(); }
  int duplicates() const { return duplicates_.load(); }

 private:
  sink sink_;
  std::atomic<bool> done_{false};
  std::atomic<int> duplicates_{0};
};

class async_model_runner {
 public:
  virtual ~async_model_runner() = default;
  virtual void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
                     std::shared_ptr<const cancellation> cancel) = 0;
  // Whether the runner reads model_request::steering at its tool boundaries.
  virtual bool supports_steering() const { return false; }
};

class model_runner {
 public:
  virtual ~model_runner() = default;
  // An assistant message {role:"assistant", content, api, provider, model, usage, stopReason,
  // timestamp}, or an error (errc::unsupported / io_error / limit_exceeded ...) whose message
  // is the provider's text.
  virtual result<boost::json::object> run(const model_request& request) = 0;
};

struct summarize_request {
  std::string session_key;
  boost::json::array messages;       // what to summarize
  std::string previous_summary;
  std::string custom_instructions;   // /compact <instructions>
  std::int64_t max_tokens = 0;
};

class compaction_provider {
 public:
  virtual ~compaction_provider() = default;
  // The summary text; an empty string or an error means "fall back to the built-in
  // summarizer"; errc::cancelled must be returned when `cancel` was set (it is propagated).
  virtual result<std::string> summarize(const summarize_request& request, const cancellation& cancel) = 0;
};

}  // namespace sessionrt
