// chat_runs: the chat.send runs in flight and the idempotency keys seen (thread-safe; no I/O).
// A run is keyed by its runId (the request's idempotencyKey). Runs of one session are served
// in the order they were sent (the session's queue mode followup), so a streamed piece for a
// session belongs to its oldest unfinished run. Each run numbers its chat events (payload seq
// 1, 2, ...) and accumulates the streamed text (a `delta` carries all the text so far and the
// new piece).
// begin(): a key seen before (running or finished, among the last kMaxRemembered) gives back the
// first run's id with duplicate = true and starts nothing.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sessionrt::gateway {

class chat_runs {
 public:
  static constexpr std::size_t kMaxRemembered = 10000;

  struct begun {
    std::string run_id;
    bool duplicate = false;
    bool running = false;  // duplicate: the first run has not finished
  };
  begun begin(const std::string& idempotency_key, const std::string& session_key, const std::string& agent_id);

  struct delta {
    std::string run_id, session_key, agent_id;
    std::int64_t seq = 0;
    std::string text;   // everything streamed so far
    std::string piece;  // what this delta adds
  };
  // A piece of the session's running reply (`index` counts the attempt's pieces from 0);
  // discarded: the attempt was dropped (its text is forgotten). Nothing when no run of the
  // session is open, the piece is empty, or it is a late piece of a run already finished (an
  // index past 0 before the open run saw its first piece: events and acks travel apart).
  std::optional<delta> on_piece(const std::string& session_key, const std::string& piece, bool discarded,
                                std::int64_t index = 0);

  struct finished {
    std::string run_id, session_key, agent_id;
    std::int64_t seq = 0;   // the seq for the closing event
    std::string streamed;   // what was streamed
  };
  // Ends the run (its closing event gets `seq`); nothing if it is not open.
  std::optional<finished> finish(const std::string& run_id);

  std::vector<std::string> open_runs(const std::string& session_key) const;
  bool has_open_run(const std::string& session_key) const;
  std::size_t open_count() const;

 private:
  struct run {
    std::string id, session_key, agent_id;
    std::int64_t seq = 0;
    std::string text;
    bool streaming = false;  // saw the first piece of an attempt
  };
  mutable std::mutex mu_;
  std::map<std::string, std::deque<run>> by_session_;
  std::map<std::string, std::string> run_session_;  // open run id -> session key
  std::map<std::string, std::string> seen_;         // idempotency key -> run id
  std::deque<std::string> seen_order_;
};

}  // namespace sessionrt::gateway
