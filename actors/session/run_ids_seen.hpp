// run_ids_seen: the host run ids (chat_event::run_id) a session already stored a user line for,
// so a chat.send retried with the same idempotencyKey does not run twice — also when the retry
// reaches a new owner after the first died (issue #36: the gateway's own dedupe, chat_runs,
// lives in one node's memory; the user's line is durable before the model call, issue #34).
// Filled from the transcript's user lines when the session opens it (their idempotencyKey
// "<runId>:user", else __openclaw.runId, as the gateway stores them) and as turns run.
// Bounded: the last `capacity` run ids, the oldest forgotten first. contains() is one hash
// lookup, for the turn's hot path. Pure (no CAF, no I/O).
#pragma once
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sessionrt::actors {

class run_ids_seen {
 public:
  static constexpr std::size_t kDefaultCapacity = 256;
  explicit run_ids_seen(std::size_t capacity = kDefaultCapacity) : capacity_(capacity ? capacity : 1) {}

  bool contains(const std::string& run_id) const { return !run_id.empty() && ids_.count(run_id) != 0; }
  // "" is no run; a run already known keeps its place (adding it again does not refresh it).
  void add(const std::string& run_id);
  // The run ids of the last `capacity` user lines of `messages` that name one, oldest first
  // (a transcript reopened after a trim adds nothing new).
  void add_from_context(const boost::json::array& messages);
  std::size_t size() const { return ids_.size(); }

 private:
  std::size_t capacity_;
  std::unordered_set<std::string> ids_;
  // A ring, not a deque: an idle session's empty set allocates nothing.
  std::vector<std::string> order_;
  std::size_t oldest_ = 0;  // where the ring's oldest id is once it is full
};

// The answer the run got, as stored: the last assistant message after the run's (last) user
// line and before the next user line, unless that one stopped for a tool call (the loop did
// not finish). nullptr when the run's line is not in `messages` or nothing answered it.
const boost::json::object* stored_reply_of_run(const boost::json::array& messages, const std::string& run_id);

}  // namespace sessionrt::actors
