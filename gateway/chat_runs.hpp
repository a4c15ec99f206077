// chat_runs: the chat.send runs in flight and the idempotency keys seen (thread-safe; no I/O).
// A run is keyed by its runId (the request's idempotencyKey), which the chat event carries into
// the session (chat_event::run_id): the session's reply.delta and turn.* events name it as
// data.runId, so what the event bus says of a run is joined to that run exactly; news of a run
// that is not one of ours (a cron turn, another host's) or no longer in flight is dropped. Each
// run remembers the connection that sent it, numbers its chat events (payload seq 1, 2, ...) and
// accumulates the streamed text (a `delta` carries all the text so far and the new piece).
// The closing event must not overtake the run's deltas, which travel apart from the turn's ack:
// the turn's turn.completed / turn.failed / turn.cancelled event follows its last reply.delta on
// the bus, so at the ack (finish) a run whose turn published one (turn_outcome::turn_event)
// waits for it (held) unless it already came. expire() lets a held run go after the caller's
// bound: a safety net for an event that never came (the bus does not lose events in-process).
// What is to be sent is handed to the caller's callback while the lock is held, so frames reach
// the sink in their order: no delta after its run's closing event.
// begin(): a key seen before (running or finished, among the last kMaxRemembered) gives back the
// first run's id with duplicate = true and starts nothing.
// A run whose turn ran and failed (not a cancellation) keeps its error message, so a retry of
// its key is answered with that error, as OpenClaw answers from its dedupe cache (not "ok"); a
// run refused before its turn (turn_outcome::turn_event false: nothing stored) forgets its key,
// so a retry runs.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "messages/chat_event.hpp"

namespace sessionrt::gateway {

class chat_runs {
 public:
  static constexpr std::size_t kMaxRemembered = 10000;

  struct begun {
    std::string run_id;
    bool duplicate = false;
    bool running = false;  // duplicate: the first run has not been acknowledged
    std::optional<std::string> error;  // duplicate: the first run failed, with this message
  };
  begun begin(const std::string& idempotency_key, const std::string& session_key, const std::string& agent_id,
              std::uint64_t origin = 0);

  struct delta {
    std::string run_id, session_key, agent_id;
    std::uint64_t origin = 0;  // the connection that sent the chat.send
    std::int64_t seq = 0;
    std::string text;   // everything streamed so far
    std::string piece;  // what this delta adds
  };
  struct finished {
    std::string run_id, session_key, agent_id;
    std::uint64_t origin = 0;
    std::int64_t seq = 0;   // the seq for the closing event
    std::string streamed;   // what was streamed
    turn_outcome outcome;
  };
  using delta_fn = std::function<void(const delta&)>;
  using closing_fn = std::function<void(const finished&)>;

  // A piece of the run's reply; discarded: the attempt was dropped (its text is forgotten). No
  // delta for a run not in flight or an empty piece.
  void on_piece(const std::string& run_id, const std::string& piece, bool discarded, const delta_fn& send);
  // The run's turn ended on the bus: its closing event goes now if it was held.
  void on_turn_end(const std::string& run_id, const closing_fn& send);

  enum class ack { unknown, sent, held };
  // The run's turn was acknowledged. Its closing event goes now (sent) unless
  // wait_for_turn_end and the turn's end has not come through the bus yet (held).
  ack finish(const std::string& run_id, turn_outcome outcome, bool wait_for_turn_end, const closing_fn& send);
  // The bound passed: a run still held sends its closing event now (true).
  bool expire(const std::string& run_id, const closing_fn& send);

  // The session's runs not yet acknowledged, in the order they were sent (a held closing event
  // is no longer a run in flight).
  std::vector<std::string> open_runs(const std::string& session_key) const;
  bool has_open_run(const std::string& session_key) const;
  std::size_t open_count() const;
  std::size_t held_count() const;

 private:
  struct run {
    std::string id, session_key, agent_id;
    std::uint64_t origin = 0;
    std::int64_t seq = 0;
    std::string text;
    bool turn_ended = false;  // the bus said so: nothing more of it comes
    std::optional<turn_outcome> held;  // acknowledged, its closing event waiting
  };
  void close(std::map<std::string, run>::iterator it, const closing_fn& send);
  void forget_key(const std::string& key);  // (the key is the run id) seen no more

  mutable std::mutex mu_;
  std::map<std::string, run> runs_;                              // by run id: open or held
  std::map<std::string, std::deque<std::string>> by_session_;    // session key -> run ids, as sent
  std::map<std::string, std::string> seen_;                      // idempotency key -> run id
  std::deque<std::string> seen_order_;
  std::map<std::string, std::string> failed_;                    // run id -> its error, while its key is seen
  std::size_t held_ = 0;  // runs whose closing event waits
};

}  // namespace sessionrt::gateway
