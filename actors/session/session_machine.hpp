// session_machine: a session's scheduler without CAF (SPEC §1.2, §3): what waits, what runs,
// what is acknowledged, and when the session may go. Its actor (session_actor.cpp) turns
// messages into the inputs below and carries out the session_plan each returns, in order; the
// model calls go through a call_port (the actor's bridge to the gate, the runner and the pool).
//   - One turn runs at a time: a chat turn or a system event, a session_core coroutine that
//     this machine starts and resumes. What arrives meanwhile waits in a turn_queue by the
//     session's queue mode (followup, collect, interrupt, steer; cap and drop); system events
//     wait in arrival order. A chat command is handled as the command table says
//     (chat_commands.hpp: /stop cancels, /status and /context list are answered at once, a
//     reset trigger cancels and runs next).
//   - A turn's effects become steps: events, the row for the store (durable puts answered by
//     stored()), the commit log's record (answered by synced()), the stale timer; its outcome
//     is acknowledged in turn order (ack_order) once what it waits for has answered.
//   - A turn refused because another process holds the transcript's write lock is retried
//     (retry step, then retry()) with storage's backoff up to session.writeLock.acquireTimeoutMs.
//   - After a turn, with a debounce, the next chat turn waits for quiet (wake step, wake()).
//   - After a trim that left the row to the store, the next turn waits for row_fetched().
//   - passivate(why) ends with a quit step once nothing runs, waits or is unacknowledged (the
//     transcript closed, session.passivated published); why "stop" first cancels the running
//     turn and refuses what waits.
// Single-threaded: every input runs on one thread, the actor's. The caller owns the port; it
// must outlive the machine. A port may call stream_text / stream_message while an input runs
// (a runner that streams before its start() returns).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "actors/session/ack_order.hpp"
#include "actors/session/call_port.hpp"
#include "actors/session/session_core.hpp"
#include "actors/session/session_plan.hpp"
#include "actors/session/session_wait.hpp"
#include "actors/session/turn_queue.hpp"

namespace sessionrt::actors {

// The call the running turn waits on (the port holds its transport). At namespace scope:
// clang 14 refuses optional::emplace() of a nested struct with default member initializers.
struct machine_call {
  std::uint64_t id = 0;
  std::function<void(model_answer)> resume_model;
  std::function<void(result<std::string>)> resume_summary;
  std::shared_ptr<cancellation> cancel = std::make_shared<cancellation>();
  std::function<void(std::string_view)> deliver_text;  // the turn's stream
  std::function<void(boost::json::object)> deliver_message;
  std::function<void(std::string, std::string, std::string)> deliver_fallback;
};

class session_machine final : private turn_io {
 public:
  // What the actor can do besides the bus, the store and replies.
  struct options {
    bool commit_log = false;  // a commit log takes log steps (durability batch: the turns' rows too)
    bool timers = false;      // a timer actor takes schedule steps
    bool alarms = false;      // wake steps can be armed (without: no debounce)
  };

  session_machine(std::string key, std::optional<session_entry> row, std::shared_ptr<const session_core_deps> deps,
                  call_port& port, options opts);
  // Abandons a running turn and closes the transcript (releasing its lock).
  ~session_machine() override;
  session_machine(const session_machine&) = delete;
  session_machine& operator=(const session_machine&) = delete;

  session_core& core() { return *core_; }
  const session_core& core() const { return *core_; }

  // ---- inputs; each returns what to do now ----
  // A chat message; `sink` gets its outcome once its turn is acknowledged (or at once for a
  // command answered without a turn, or a refusal).
  session_plan chat(chat_event_ptr ev, route_facts route, outcome_fn sink);
  // A system event; `sink` (may be null) once it was handled.
  session_plan system(system_event ev, outcome_fn sink);
  // The commit log made transcript `file`'s appends up to `seq` durable, or failed (error).
  session_plan synced(std::uint64_t file, std::uint64_t seq, const std::string& error);
  // The oldest durable put answered ("" or why it failed).
  session_plan stored(const std::string& error);
  // The store answered a fetch: the row (nullopt: none), or `failure` (a sentence) if unread.
  session_plan row_fetched(std::optional<session_entry> row, const std::string& failure);
  // Call `id` answered / was admitted by the gate / passed model.timeoutMs. A late input for a
  // call that is over is ignored.
  session_plan model_answered(std::uint64_t id, model_answer answer);
  session_plan summary_answered(std::uint64_t id, result<std::string> answer);
  session_plan granted(std::uint64_t id);
  session_plan timed_out(std::uint64_t id);
  // A streamed piece / a runner's note (kind "message" | "fallback", a JSON object's text).
  session_plan text(std::uint64_t id, std::string_view piece);
  session_plan note(std::uint64_t id, const std::string& kind, const std::string& json);
  // The write lock's backoff ended / the debounce ended.
  session_plan retry();
  session_plan wake();
  // Go once idle; "stop": cancel and refuse first.
  session_plan passivate(const std::string& why);
  // session.trimIdleMs: session_core::trim() when idle (else nothing).
  session_plan trim();

  // A port's inline delivery, while an input runs (its steps join that input's plan).
  void stream_text(std::uint64_t id, std::string_view piece);
  void stream_message(std::uint64_t id, boost::json::object message);

  // Nothing runs or waits: no turn (running, waiting for its lock or its row), no debounce, an
  // empty queue. (Store maintenance passivates only an idle session.)
  bool idle() const { return !holding() && queue_.empty(); }
  // What the session waits on (its settle answer); a running call is reported on_runner or
  // on_pool (the port knows whether the gate still holds it).
  session_wait wait() const;
  // One line describing the state (the actor's stats).
  std::string describe() const;

 private:
  // The turn that runs (a chat turn or a system event); its event and route are referenced by
  // the coroutine, so they live here, at a fixed address, until it ends.
  struct running_turn {
    bool is_chat = true;
    chat_event_ptr ev;  // set for a chat turn
    route_facts route;
    system_event sys;
    outcome_fn sink;  // null for a system event nobody waits for
    // Queue mode steer: messages handed to the running call (in order), and its inbox.
    std::vector<queued_chat> steered;
    std::shared_ptr<steer_inbox> inbox;
    std::vector<outcome_fn> extra;  // collect: the other senders of a merged turn
    core_effects fx;
    std::string cancel_reason;
    int attempt = 1;             // the write-lock attempt this is (1-based)
    std::int64_t waited_ms = 0;  // lock waits scheduled so far
    task<turn_outcome> t;
  };
  // ---- turn_io (the core's turn waits through these) ----
  std::optional<model_answer> start_model_call(std::shared_ptr<model_request> request,
                                               std::function<void(model_answer)> resume) override;
  std::optional<result<std::string>> start_summary(std::shared_ptr<compaction_provider> provider,
                                                   std::shared_ptr<summarize_request> request,
                                                   std::function<void(result<std::string>)> resume) override;
  void publish_progress() override;
  std::string cancel_reason() const override { return turn_ ? turn_->cancel_reason : std::string(); }
  bool steering_supported() const override { return port_.steering_supported(); }

  // A turn runs, waits for its lock or its row, or the debounce holds the queue.
  bool holding() const { return turn_ || lock_wait_ || fetching_row_ || debounce_; }
  bool running() const { return turn_ && !turn_->t.done(); }
  bool rows_in_log() const;
  session_plan take() { return std::exchange(plan_, {}); }
  template <class Step>
  void step(Step s) {
    plan_.steps.emplace_back(std::move(s));
  }
  void publish(std::vector<lifecycle_event>& events);
  void reply(outcome_fn sink, turn_outcome out);
  turn_outcome refused(status why) const;

  void on_chat(chat_event_ptr ev, route_facts route, outcome_fn sink);
  void stop_command(outcome_fn sink);
  void enqueue(chat_event_ptr ev, route_facts route, outcome_fn sink);
  void pump(bool after_turn);
  void run(std::unique_ptr<running_turn> t);
  void after_resume();
  void finish_turn();
  void apply(core_effects& fx, outcome_fn sink, turn_outcome out);
  void put_durably(core_effects& fx, bool as_text, ack_order::waits& w);
  void rows_to_log(core_effects& fx, ack_order::waits& w);
  void release_ready();
  void fail_next(const std::string& why);
  void cancel_turn(const std::string& reason);
  void finish_passivation();
  void end_call();
  template <class Answer>
  void answer(std::uint64_t id, Answer a);
  void log_while_waiting();

  std::shared_ptr<const session_core_deps> deps_;
  call_port& port_;
  options opts_;
  std::unique_ptr<session_core> core_;
  session_plan plan_;  // the steps of the input that runs
  ack_order acks_;
  turn_queue queue_;
  std::unique_ptr<running_turn> turn_;       // running
  std::unique_ptr<running_turn> lock_wait_;  // waiting for the transcript's write lock
  std::optional<machine_call> call_;
  std::uint64_t next_call_id_ = 1;
  bool fetching_row_ = false;
  bool debounce_ = false;  // a wake step is armed
  std::int64_t wake_at_ms_ = -1;  // ... for this time
  std::optional<std::int64_t> scheduled_stale_at_;
  bool passivating_ = false;
  bool passivated_ = false;  // session.passivated and quit were planned: never twice
  std::string passivate_why_;
  std::uint64_t rows_only_seq_ = 0;  // batch: the row-only appends sent (answered as (0, seq))
  // batch: (transcript id, seq) of the record log_while_waiting() sent for the turn running.
  std::pair<std::uint64_t, std::uint64_t> waiting_record_{0, 0};
};

}  // namespace sessionrt::actors
