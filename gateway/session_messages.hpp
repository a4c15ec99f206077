// session_messages: sessions.messages.subscribe's subscribers and the session.message events they
// get, one for every message stored in a session they subscribed to (the runtime's
// message.appended lifecycle events say when; the messages are read back from the transcript on
// a method worker, with the identities chat.history gives them, message_identity.hpp).
// Thread-safe. Per session it remembers the transcript and the byte offset of the newest message
// pushed (or there at the subscription): a message is new when its entry lies beyond it (a
// transcript is only appended to) or is in another transcript (a reset). So each stored message
// goes out once however the appends and reads interleave (one reader per session at a time;
// appends that come while it reads make it read again), and a compaction, which renumbers the
// context, loses none. A compaction's summary is not a stored message: it is not pushed.
// A connection that goes away without unsubscribing stays listed (the sink skips it) until the
// registry holds kMaxSubscriptions pairs: the oldest are then dropped.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gateway/gateway_core.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::gateway {

class session_messages {
 public:
  static constexpr std::size_t kMaxSubscriptions = 4096;

  // Where a session's pushes stand: its transcript (session id) and the offset of the newest
  // message pushed (none: every message of that transcript is new).
  struct mark {
    std::string session_id;
    std::optional<std::uint64_t> offset;
  };
  // Subscribes; `baseline` is where the session stands now (what was stored before the
  // subscription is not pushed), used when nobody watched the session yet.
  void subscribe(std::uint64_t conn, const std::string& key, mark baseline);
  bool unsubscribe(std::uint64_t conn, const std::string& key);
  std::vector<std::uint64_t> subscribers(const std::string& key) const;
  bool watched(const std::string& key) const;
  std::size_t size() const;

  // One reader per session: begin_read false = another reads (it will read again).
  bool begin_read(const std::string& key);
  // true = appends came meanwhile: read again.
  bool end_read(const std::string& key);
  mark last(const std::string& key) const;
  void set_last(const std::string& key, mark m);

 private:
  struct session_state {
    std::set<std::uint64_t> conns;
    mark last;
    bool reading = false, again = false;
  };
  mutable std::mutex mu_;
  std::map<std::string, session_state> by_key_;
  std::deque<std::pair<std::uint64_t, std::string>> order_;
};

// The runtime's message.appended: pushes the session's new messages to its subscribers.
void session_message_appended(gateway_core& core, const lifecycle_event& e);

}  // namespace sessionrt::gateway
