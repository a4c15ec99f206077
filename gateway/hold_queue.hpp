// hold_queue: the calls a gateway holds for sessions whose shard nobody serves now (a handoff or a
// failover in progress: issue #36, "messages for a shard in handoff wait and are then delivered in
// arrival order"), one FIFO per session key, without I/O, CAF or threads (shard_forward.hpp keeps
// the calls themselves, by id, and locks around this class).
// Contract:
//   - Every call of a key that may be held gets an arrival number (arrive()) when it comes in;
//     a key's queue is ordered by it, so a call that was sent on and came back refused
//     (put_back / hold of a call that arrived earlier) takes its place before later arrivals.
//   - busy(key): the key has held calls or one on its way (taken, not yet finished). A new call
//     of a busy key must be held too (hold()), even when its owner is known now: so the calls of
//     a key reach the owner in arrival order, one at a time.
//   - take(key) hands out the head of an idle key (the caller sends it on); finished(key) says it
//     was answered (the next may go), put_back(entry) that it was refused again (it waits at its
//     place). A key with nothing held and nothing on its way is forgotten.
//   - hold() refuses (full) past max_held calls held on the node (a taken call counts until it
//     is finished or put back; a put-back call is always taken back).
//   - expired(now): calls held past their deadline (arrival + hold) are removed and returned (the
//     caller answers them as before the hold: UNAVAILABLE retryable). A taken call is not.
//   - drop_conn(conn): a closed connection's held calls are removed and returned (not answered).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sessionrt::gateway {

struct hold_limits {
  std::chrono::milliseconds hold{15000};  // gateway.cluster.holdMs
  std::size_t max_held = 1024;            // calls held on this node at once
};

class hold_queue {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  struct entry {
    std::uint64_t id = 0;    // the caller's handle of the call
    std::uint64_t seq = 0;   // arrival number (arrive())
    std::uint64_t conn = 0;  // the connection it came on
    std::string key;         // the session's store key
    time_point deadline{};
  };
  enum class admit { held, full };

  explicit hold_queue(hold_limits limits) : limits_(limits) {}

  std::uint64_t arrive() { return ++seq_; }
  bool busy(const std::string& key) const { return keys_.count(key) != 0; }
  // A call that arrived at `arrived` (its number `seq`) waits for `key`'s owner.
  admit hold(const std::string& key, std::uint64_t id, std::uint64_t seq, std::uint64_t conn, time_point arrived);
  // Keys with held calls and none on its way: their heads may be sent on.
  std::vector<std::string> idle_keys() const;
  // The head of an idle key (false: none, or one already on its way).
  bool take(const std::string& key, entry& out);
  void finished(const std::string& key);
  void put_back(entry e);
  std::vector<entry> expired(time_point now);
  std::vector<entry> drop_conn(std::uint64_t conn);

  std::size_t held() const { return held_; }  // waiting and on their way
  const hold_limits& limits() const { return limits_; }

 private:
  struct lane {
    std::deque<entry> waiting;  // by seq
    bool taken = false;
  };
  void insert(lane& l, entry e);
  void forget_if_empty(const std::string& key);
  // The waiting calls `leaves` picks, removed, in arrival order.
  std::vector<entry> take_waiting(const std::function<bool(const entry&)>& leaves);

  hold_limits limits_;
  std::uint64_t seq_ = 0;
  std::size_t held_ = 0;
  std::map<std::string, lane> keys_;
};

}  // namespace sessionrt::gateway
