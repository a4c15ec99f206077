// turn_queue: what waits for a session's running turn (SPEC §3, OpenClaw's queue modes, see
// queue_settings.hpp). A plain class, no CAF: the session actor pushes what arrives while it
// is busy and pops the next piece of work when the turn ends.
// - Chat messages and system events keep their arrival order.
// - collect: consecutive waiting chat messages pop as one turn (texts joined by a blank line;
//   every sender gets that turn's outcome).
// - Past `cap` waiting chat messages, `drop` decides: old drops the oldest waiting message,
//   new refuses the arriving one, summarize drops the oldest and keeps a line of it for the
//   next turn's runtime context ("[Queue overflow] ..."). What is dropped is returned to the
//   caller, which answers its sender.
#pragma once
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/session/queue_settings.hpp"
#include "actors/session/route_facts.hpp"
#include "messages/chat_event.hpp"
#include "messages/session_entry.hpp"

namespace sessionrt::actors {

using outcome_fn = std::function<void(turn_outcome)>;

struct queued_chat {
  chat_event_ptr ev = std::make_shared<chat_event>();  // never null but moved from
  route_facts route;
  outcome_fn sink;
  std::int64_t arrived_ms = 0;
};

// The next piece of work: a chat turn (with every sender it answers) or a system event.
struct queued_work {
  std::optional<queued_chat> chat;      // the event to run (merged for collect)
  std::vector<outcome_fn> extra_sinks;  // collect: the other senders of the merged turn
  std::optional<system_event> system;
  outcome_fn system_sink;  // answers the system event's sender (null: nobody waits)
};

// The queue settings of one session: the row's queueMode / queueCap / queueDrop /
// queueDebounceMs over the config's messages.queue.
queue_settings effective_queue(const queue_settings& config, const session_entry* row);

class turn_queue {
 public:
  // Returns what the cap dropped (possibly `c` itself, with drop=new).
  std::vector<queued_chat> push(queued_chat c, const queue_settings& q);
  void push_front(queued_chat c);
  void push(system_event ev, outcome_fn sink = {});
  std::optional<queued_work> pop(const queue_settings& q);
  // Every waiting chat message (/stop, shutdown); system events stay.
  std::vector<queued_chat> take_chats();
  std::size_t chats() const { return chats_; }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }  // chats and system events
  std::int64_t last_arrival_ms() const { return last_arrival_ms_; }

 private:
  struct queued_system {
    system_event ev;
    outcome_fn sink;
  };
  // A list, not a deque: an idle session keeps no buffer (libstdc++'s deque holds a map and a
  // ~800 B node for as long as it lives, ~20% of an idle actor's heap).
  std::list<std::variant<queued_chat, queued_system>> items_;
  std::size_t chats_ = 0;
  std::int64_t last_arrival_ms_ = 0;
  std::vector<std::string> overflow_;  // summarize: lines of what was dropped, for the next turn
};

}  // namespace sessionrt::actors
