// turn_io: what a turn waits for, and who does it. The session actor implements it: a model
// call goes through the runtime's model_gate (model.maxConcurrent) to the runner, with the
// model.timeoutMs alarm; a compaction provider's summary runs on the runtime's pool. The turn
// (session_core, CAF-free) awaits them with the awaiters below.
// Contract of start_*: either the answer is there at once (returned: nothing to wait for —
// no runner, the turn was cancelled already, a runner that answered before start() returned)
// or it is nullopt and `resume` is called later exactly once, on the actor's thread, from a
// message handler. A cancelled call resumes with errc::cancelled.
#pragma once
#include <boost/json/object.hpp>
#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "messages/model_runner.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

using model_answer = result<boost::json::object>;

class turn_io {
 public:
  virtual ~turn_io() = default;
  virtual std::optional<model_answer> start_model_call(std::shared_ptr<model_request> request,
                                                       std::function<void(model_answer)> resume) = 0;
  virtual std::optional<result<std::string>> start_summary(std::shared_ptr<compaction_provider> provider,
                                                           std::shared_ptr<summarize_request> request,
                                                           std::function<void(result<std::string>)> resume) = 0;
  // The turn has events to show before it waits (compaction.started, memory_flush.started).
  virtual void publish_progress() = 0;
  // Why the turn was cancelled ("stop", "interrupt", "reset", "shutdown"), "" if it was not:
  // then every later call answers errc::cancelled at once.
  virtual std::string cancel_reason() const = 0;
  // Whether the runner takes steered messages (async_model_runner::supports_steering).
  virtual bool steering_supported() const { return false; }
};

// model_call waiting{io, request}; auto answer = co_await waiting;
// Always a named awaiter: GCC 12 destroys a temporary aggregate awaiter (co_await
// model_call{...}) twice, which frees the request under the caller.
struct model_call {
  turn_io& io;
  std::shared_ptr<model_request> request;
  std::optional<model_answer> answer;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) {
    io.publish_progress();
    answer = io.start_model_call(request, [this, h](model_answer a) {
      answer.emplace(std::move(a));
      h.resume();
    });
    return !answer.has_value();  // an answer at once: go on without suspending
  }
  model_answer await_resume() { return std::move(*answer); }
};

// provider_summary_call waiting{io, provider, request}; co_await waiting (named, as above)
struct provider_summary_call {
  turn_io& io;
  std::shared_ptr<compaction_provider> provider;
  std::shared_ptr<summarize_request> request;
  std::optional<result<std::string>> answer;

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> h) {
    io.publish_progress();
    answer = io.start_summary(provider, request, [this, h](result<std::string> a) {
      answer.emplace(std::move(a));
      h.resume();
    });
    return !answer.has_value();
  }
  result<std::string> await_resume() { return std::move(*answer); }
};

}  // namespace sessionrt::actors
