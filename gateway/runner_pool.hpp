// runner_pool: the async_model_runner the gateway hands the runtime. While no client is
// attached (sessionrt.runner.attach) calls go to the local runner (the simulated model by
// default); while some are, each call goes to the attached runner with the fewest calls in
// flight, as a `sessionrt.turn.request` event {callId, sessionKey, sessionId, purpose,
// systemPrompt, messages, provider, model, contextWindow, maxTokens, stream}. The runner answers
// with sessionrt.turn.result requests: {callId, delta} for a streamed piece, then
// {callId, message} (the assistant message) or {callId, error}. A cancelled call gets a
// `sessionrt.turn.cancel` {callId} event and its later results are ignored.
// detach(): the runner's calls that streamed nothing yet move to another runner (failover);
// the others, or all when no runner is left, complete with an error naming the disconnect.
// Thread-safe.
#pragma once
#include <boost/json.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "gateway/gateway_core.hpp"
#include "messages/model_runner.hpp"

namespace sessionrt::gateway {

class runner_pool final : public async_model_runner {
 public:
  runner_pool(std::shared_ptr<async_model_runner> local, frame_sink* sink, gateway_metrics* metrics)
      : local_(std::move(local)), sink_(sink), metrics_(metrics) {}

  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation> cancel) override;

  void attach(std::uint64_t conn);
  void detach(std::uint64_t conn);
  std::size_t attached() const;
  // A sessionrt.turn.result from `conn`; an error names what was wrong (unknown callId, ...).
  status on_result(std::uint64_t conn, const boost::json::object& params);
  // What is wrong with a sessionrt.turn.result's params ("at /delta: must be string"), if anything.
  static std::optional<std::string> result_params_problem(const boost::json::object& params);

 private:
  struct call {
    std::shared_ptr<const model_request> request;
    std::shared_ptr<model_completion> done;
    std::uint64_t conn = 0;
    bool streamed = false;
  };
  std::uint64_t pick_locked() const;  // 0 when none
  void send_request(std::uint64_t conn, const std::string& id, const model_request& r);

  std::shared_ptr<async_model_runner> local_;
  frame_sink* sink_;
  gateway_metrics* metrics_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, std::size_t> runners_;  // conn -> calls in flight
  std::map<std::string, call> calls_;
  std::uint64_t next_id_ = 0;
};

}  // namespace sessionrt::gateway
