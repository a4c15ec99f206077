// call_bridge: the session actor's call_port (call_port.hpp), without CAF. It takes the
// session_machine's model and summary calls across threads — through the runtime's model_gate
// (model.maxConcurrent) to the asynchronous runner, or onto the blocking pool for a compaction
// provider's summarize(), with the model.timeoutMs alarm — and hands what comes back to a
// call_mailbox, which the actor implements by sending itself the matching message.
//
// Threads and ownership:
//   - The owner (the session actor) calls every member on its own thread, one at a time, and
//     feeds what the mailbox receives back to its machine (model_answered, granted, ...) on
//     that thread too. A call is over once the machine calls end(id) (answered, cancelled or
//     timed out); ids are the machine's, never reused, one call at a time.
//   - The bridge holds the running call's transport: its request until the runner has it, the
//     gate's ticket and the timeout alarm; end(id) and the destructor release them. The
//     runner, gate, pool and alarms are borrowed (they outlive every session).
//   - The call_mailbox is shared: the runner's completion, the request's stream handlers, the
//     gate's grant, the pool's job and the alarm keep it, and touch the bridge only inline
//     (below), so whatever they say after the bridge is gone only reaches the mailbox (which
//     drops it once its actor is gone). Its members are called from any thread (the runner's, the one whose release()
//     made room at the gate, the pool's, the alarms'), also the owner's.
//   - Inline: a runner that answers, streams or notes before its start() returns does so on
//     the owner's thread inside start_model / launch; that answer is returned (the call is
//     then over) and those pieces go to the inline_sink at once, ahead of it — never to the
//     mailbox, whose message would arrive after the call ended. A gate that grants inside
//     acquire() likewise lets the call go to the runner at once.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "actors/model/blocking_work.hpp"
#include "actors/model/model_gate.hpp"
#include "actors/session/call_port.hpp"
#include "messages/clock.hpp"

namespace sessionrt::actors {

// Where what a call says from other threads goes (the session actor's mailbox). Thread-safe;
// every member may run after the call ended or the owner is gone (the owner ignores a stale
// id: session_machine does).
class call_mailbox {
 public:
  virtual ~call_mailbox() = default;
  virtual void granted(std::uint64_t id) const = 0;                        // the gate admitted the call
  virtual void model_done(std::uint64_t id, model_answer answer) const = 0;  // the runner's answer
  virtual void text(std::uint64_t id, std::string piece) const = 0;         // a streamed piece
  // A runner's note: kind "message" (a tool-loop message) or "fallback", as a JSON object's text.
  virtual void note(std::uint64_t id, std::string kind, std::string json) const = 0;
  virtual void summary_done(std::uint64_t id, result<std::string> answer) const = 0;
  virtual void timed_out(std::uint64_t id) const = 0;  // model.timeoutMs passed
};

struct call_bridge_deps {
  async_model_runner* runner = nullptr;  // nullptr: calls fail ("no model runner", the machine says)
  model_gate* gate = nullptr;            // nullptr: no bound
  blocking_work* pool = nullptr;         // summaries; nullptr: none can run
  alarms* timers = nullptr;              // the timeout alarm; nullptr: none
  const clock* time = nullptr;           // when the alarm is due (with timers)
  std::int64_t timeout_ms = 0;           // model.timeoutMs; <= 0: no alarm
};

class call_bridge final : public call_port {
 public:
  // Pieces and notes made before the runner's start() returned (the machine's stream_text /
  // stream_message): they join the input that runs.
  struct inline_sink {
    std::function<void(std::uint64_t, std::string_view)> text;
    std::function<void(std::uint64_t, boost::json::object)> message;
  };
  // What the running call waits on (the session's settle answer).
  enum class waiting { nothing, gate, runner, pool };

  call_bridge(call_bridge_deps deps, std::shared_ptr<const call_mailbox> mail);
  ~call_bridge() override;  // releases what a running call holds
  call_bridge(const call_bridge&) = delete;
  call_bridge& operator=(const call_bridge&) = delete;

  void deliver_inline_to(inline_sink sink) { inline_ = std::move(sink); }
  // The alarm of call `id` fired (its timed_out was received): nothing to cancel at end().
  void timeout_fired(std::uint64_t id);
  waiting wait() const;

  // ---- call_port ----
  bool has_runner() const override { return deps_.runner != nullptr; }
  bool steering_supported() const override { return deps_.runner && deps_.runner->supports_steering(); }
  std::optional<model_answer> start_model(std::uint64_t id, std::shared_ptr<model_request> request, streams s,
                                          std::shared_ptr<cancellation> cancel) override;
  std::optional<model_answer> launch(std::uint64_t id) override;
  bool can_summarize() const override { return deps_.pool != nullptr; }
  void start_summary(std::uint64_t id, std::shared_ptr<compaction_provider> provider,
                     std::shared_ptr<summarize_request> request, std::shared_ptr<cancellation> cancel) override;
  void end(std::uint64_t id) override;

 private:
  // The running call's transport.
  struct transport {
    std::uint64_t id = 0;
    bool summary = false;
    std::shared_ptr<model_request> request;  // until handed to the runner
    std::shared_ptr<cancellation> cancel;
    std::optional<model_gate::ticket> ticket;
    std::optional<alarms::id> timeout;
  };

  std::optional<model_answer> hand_to_runner();
  void arm_timeout();

  call_bridge_deps deps_;
  std::shared_ptr<const call_mailbox> mail_;
  inline_sink inline_;
  std::unique_ptr<transport> call_;
};

}  // namespace sessionrt::actors
