// chat_runs: the chat.send runs in flight and the idempotency keys seen (thread-safe; no I/O).
// A run is keyed by its runId (the request's idempotencyKey) and remembers the connection that
// sent it. Runs of one session are served in the order they were sent (the session's queue mode
// followup), so what the event bus says of a session (a streamed piece, the turn's end) belongs
// to its oldest run whose turn has not ended on the bus. Each run numbers its chat events
// (payload seq 1, 2, ...) and accumulates the streamed text (a `delta` carries all the text so
// far and the new piece).
// The closing event must not overtake the run's deltas, which travel apart from the turn's ack:
// the session's turn.completed / turn.failed / turn.cancelled event follows the turn's last
// reply.delta (done) on the bus, so at the ack (finish) a run whose turn called the model waits
// for it (held) unless it already came; expire() lets a held run go after the caller's bound,
// and later bus news of it is dropped or, past the bound, may be taken for the next run's.
// What is to be sent is handed to the caller's callback while the lock is held, so frames reach
// the sink in their order: no delta after its run's closing event.
// begin(): a key seen before (running or finished, among the last kMaxRemembered) gives back the
// first run's id with duplicate = true and starts nothing.
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

  // A piece of the session's running reply (`index` counts the attempt's pieces from 0);
  // discarded: the attempt was dropped (its text is forgotten). No delta when no run of the
  // session waits for bus news, the piece is empty, or it is a late piece of a run already
  // gone (an index past 0 before the run saw its first piece).
  void on_piece(const std::string& session_key, const std::string& piece, bool discarded, std::int64_t index,
                const delta_fn& send);
  // The session's turn ended on the bus: its run's closing event goes now if it was held.
  void on_turn_end(const std::string& session_key, const closing_fn& send);

  enum class ack { unknown, sent, held };
  // The run's turn was acknowledged. Its closing event goes now (sent) unless
  // wait_for_turn_end and the turn's end has not come through the bus yet (held).
  ack finish(const std::string& run_id, turn_outcome outcome, bool wait_for_turn_end, const closing_fn& send);
  // The bound passed: a run still held sends its closing event now (true).
  bool expire(const std::string& run_id, const closing_fn& send);

  // Runs not yet acknowledged (a held closing event is no longer a run in flight).
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
    bool streaming = false;  // saw the first piece of an attempt
    bool turn_ended = false;  // the bus said so: nothing more of it comes
    std::optional<turn_outcome> held;  // acknowledged, its closing event waiting
  };
  run* bus_target(const std::string& session_key);  // the oldest run whose turn has not ended
  void close(std::deque<run>& q, std::deque<run>::iterator it, const closing_fn& send);

  mutable std::mutex mu_;
  std::map<std::string, std::deque<run>> by_session_;
  std::map<std::string, std::string> run_session_;  // run id (open or held) -> session key
  std::map<std::string, std::string> seen_;         // idempotency key -> run id
  std::deque<std::string> seen_order_;
  std::size_t held_ = 0;  // runs whose closing event waits
};

}  // namespace sessionrt::gateway
