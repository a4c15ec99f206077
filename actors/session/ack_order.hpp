// ack_order: a session's acknowledgements, released in turn order (SPEC §1.2). A turn's
// outcome is ready when the group commit synced its appends (batch durability) and, with
// storage.storeDurableAck, when sessions.json holds its row; a later turn's ack never
// overtakes an earlier one. A plain class, no CAF; the session actor feeds it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "messages/chat_event.hpp"

namespace sessionrt::actors {

class ack_order {
 public:
  using sink = std::function<void(turn_outcome)>;
  struct waits {
    std::uint64_t sync_seq = 0;   // 0: nothing to wait for from the syncer
    std::uint64_t sync_file = 0;  // ... in the transcript with this id
    bool store = false;           // a durable store write is outstanding
    // 0: none; else also a row-only append of the session's, answered as (0, seq): the turn's
    // rows when its bytes record repeats one already in flight (session_machine::apply).
    std::uint64_t rows_seq = 0;
    bool ready() const { return sync_seq == 0 && rows_seq == 0 && !store; }
  };
  void push(sink s, turn_outcome outcome, waits w);
  // The syncer made `file` durable up to `seq`, or failed to (error: the outcome fails). File 0:
  // the session's row-only appends up to `seq`.
  void synced(std::uint64_t file, std::uint64_t seq, const std::string& error);
  // The oldest outstanding durable store write finished (error: its outcome fails).
  void stored(const std::string& error);
  // The outcomes that are ready, oldest first, each with its sink; call them in order.
  std::vector<std::pair<sink, turn_outcome>> take_ready();
  bool empty() const { return pending_.empty(); }
  std::size_t size() const { return pending_.size(); }
  // Outcomes still waiting for the syncer / for a durable store write (a session's settle).
  std::size_t waiting_on_sync() const;
  std::size_t waiting_on_store() const;

 private:
  struct pending {
    sink s;
    turn_outcome outcome;
    waits w;
  };
  // Acks in turn order; a handful at most, so a vector (a std::deque would allocate ~600
  // bytes up front for every session).
  std::vector<pending> pending_;
};

}  // namespace sessionrt::actors
