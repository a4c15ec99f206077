// provider_runner: the built-in async_model_runner for models configured under
// models.providers (OpenAI chat completions and Responses, Anthropic messages, Google
// generative AI). One runner serves every session; all its HTTP goes through one http_loop
// thread, so a thousand streams in flight cost no thread each.
//
// One call (start()):
//   1. The candidates: request.provider/model, then request.fallbacks. Each is looked up in
//      models.providers (a model the provider does not list is sent as written, with the
//      request's window); an unknown provider or an API without a wire format is a terminal
//      failure of that candidate.
//   2. The request is built by the candidate's wire format from the request's system prompt,
//      messages and the registered tools, and streamed. Text goes to request.on_text as it
//      arrives; the stream becomes the pi-shaped assistant message (usage with cost,
//      stopReason, provider, model, api, responseId).
//   3. Before the first byte of a 2xx stream, a failure (408/409/429/5xx/529, a connection
//      error, a first-byte timeout) is retried per retry_policy; a server-given wait past
//      models.retry.maxDelayMs, exhausted retries, or a terminal status (400 that is no
//      overflow, 401, 403, 404) moves to the next candidate (request.on_fallback says why).
//      A context-overflow error is never retried here: it completes the call with the
//      provider's text, which the runtime compacts on and retries. A stream that fails midway
//      is not retried: the call fails with the provider's text.
//   4. stopReason toolUse with tools registered: every tool call of the message runs (at once
//      when several), their results are appended, and once all are in the round is reported
//      (request.on_message: the assistant message, then each toolResult) before the next model
//      call; steering texts are taken at this boundary; the mid-turn precheck is asked. At
//      most request.max_tool_iterations (else options.max_tool_iterations) model calls; past
//      it the call completes with the last message.
//   5. The final assistant message completes the call. An API error (stopReason error)
//      completes with an error status carrying the provider's text.
// Cancellation aborts the HTTP transfer at once (the server sees the connection close) and
// cancels running tools; the completion is errc::cancelled.
// API keys are sent only as the API's auth header: never logged, never in an error text.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "actors/session/model_catalog_settings.hpp"
#include "messages/clock.hpp"
#include "messages/model_runner.hpp"
#include "runtime/providers/http_loop.hpp"
#include "runtime/providers/tools.hpp"

namespace sessionrt::providers {

struct provider_runner_options {
  actors::models_settings models;    // providers (keys resolved), retry limits, maxToolIterations
  std::shared_ptr<const tool_registry> tools;  // null: no tools offered
  clock* time = nullptr;             // message timestamps and retry-after dates; required
  alarms* timers = nullptr;          // retry waits; required
  std::int64_t default_timeout_ms = 120000;  // first byte / idle stream, when a provider sets no timeoutSeconds
  std::uint64_t jitter_seed = 0;     // 0: random
  // The loop to use (shared with others); null: the runner starts its own.
  std::shared_ptr<http_loop> loop;
  // Whether an error text is a context overflow (actors/session/overflow_detector.hpp, passed
  // in by the composition root so this library needs no actor code). Such an error completes
  // the call at once: no retry, no fallback (the runtime compacts and retries the turn).
  std::function<bool(std::string_view)> is_overflow_error;
};

class provider_runner final : public async_model_runner {
 public:
  static result<std::shared_ptr<provider_runner>> create(provider_runner_options options);
  ~provider_runner() override;

  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override;
  bool supports_steering() const override { return true; }

  struct counters {
    std::uint64_t calls = 0, http_requests = 0, retries = 0, fallbacks = 0, tool_calls = 0, failures = 0;
  };
  counters stats() const;
  http_loop& loop();

  struct impl;  // defined (and only usable) in provider_runner.cpp

 private:
  explicit provider_runner(std::shared_ptr<impl> p);
  std::shared_ptr<impl> impl_;
};

}  // namespace sessionrt::providers
