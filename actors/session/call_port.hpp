// call_port: the model and summary calls of a session's turn, as its machine
// (session_machine.hpp) hands them to whoever carries them across threads — the session
// actor's call_bridge (call_bridge.hpp: the runtime's model_gate, the asynchronous runner, the
// blocking pool, the model.timeoutMs alarm), or a test that answers them by hand. The machine keeps the call's bookkeeping (its
// id, the turn's continuation and stream handlers, its cancellation); the port keeps what the
// transport holds (the gate's ticket, the alarm) and turns what the runner says from its
// threads into the machine's inputs: model_answered / summary_answered / granted / timed_out /
// text / note (call id). One call at a time; ids are never reused.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "actors/session/turn_io.hpp"

namespace sessionrt::actors {

class call_port {
 public:
  // The request's stream handlers the machine took (it delivers what they say to the turn):
  // the port sets these handlers again, to reach the machine's text() / note() inputs.
  struct streams {
    bool text = false, message = false, fallback = false;
  };

  virtual ~call_port() = default;
  // Whether a model runner is registered (else a call fails at once: "no model runner").
  virtual bool has_runner() const = 0;
  // async_model_runner::supports_steering.
  virtual bool steering_supported() const = 0;
  // Starts model call `id` (through the gate when there is one). Returns its answer when the
  // call is over already (the runner answered before its start() returned; the port holds
  // nothing of it any more), else nullopt: granted(id) or model_answered(id) follows. Pieces
  // and notes made before start() returns reach the machine at once (stream_text /
  // stream_message), ahead of the answer.
  virtual std::optional<model_answer> start_model(std::uint64_t id, std::shared_ptr<model_request> request,
                                                  streams s, std::shared_ptr<cancellation> cancel) = 0;
  // The gate admitted call `id`: hands it to the runner; returns as start_model does (nullopt
  // too when `id` does not wait for the gate).
  virtual std::optional<model_answer> launch(std::uint64_t id) = 0;
  // Whether summaries can run (a pool for compaction providers' blocking summarize()).
  virtual bool can_summarize() const = 0;
  // Runs provider->summarize(*request) off the actor's thread; summary_answered(id) follows.
  virtual void start_summary(std::uint64_t id, std::shared_ptr<compaction_provider> provider,
                             std::shared_ptr<summarize_request> request, std::shared_ptr<cancellation> cancel) = 0;
  // Call `id` is over (answered, cancelled or timed out): release its gate ticket and alarm.
  virtual void end(std::uint64_t id) = 0;
};

}  // namespace sessionrt::actors
