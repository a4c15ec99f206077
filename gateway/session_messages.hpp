// session_messages: sessions.messages.subscribe's subscribers and the session.message events they
// get, one for every message stored in a session they subscribed to (the runtime's
// message.appended lifecycle events say when; the messages are read back from the transcript on
// a method worker, numbered as chat.history numbers them, message_identity.hpp).
// Thread-safe. Per session it remembers the last seq pushed, so each stored message goes out once
// however the appends and reads interleave (one reader per session at a time; appends that come
// while it reads make it read again).
// A connection that goes away without unsubscribing stays listed (the sink skips it) until the
// registry holds kMaxSubscriptions pairs: the oldest are then dropped.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gateway/gateway_core.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::gateway {

class session_messages {
 public:
  static constexpr std::size_t kMaxSubscriptions = 4096;

  // Subscribes; `baseline_seq` is the session's message count now (what was stored before the
  // subscription is not pushed), used when nobody watched the session yet.
  void subscribe(std::uint64_t conn, const std::string& key, std::int64_t baseline_seq);
  bool unsubscribe(std::uint64_t conn, const std::string& key);
  std::vector<std::uint64_t> subscribers(const std::string& key) const;
  bool watched(const std::string& key) const;
  std::size_t size() const;

  // One reader per session: begin_read false = another reads (it will read again).
  bool begin_read(const std::string& key);
  // true = appends came meanwhile: read again.
  bool end_read(const std::string& key);
  std::int64_t last_seq(const std::string& key) const;
  void set_last_seq(const std::string& key, std::int64_t seq);

 private:
  struct session_state {
    std::set<std::uint64_t> conns;
    std::int64_t last_seq = 0;
    bool reading = false, again = false;
  };
  mutable std::mutex mu_;
  std::map<std::string, session_state> by_key_;
  std::deque<std::pair<std::uint64_t, std::string>> order_;
};

// The runtime's message.appended: pushes the session's new messages to its subscribers.
void session_message_appended(gateway_core& core, const lifecycle_event& e);

}  // namespace sessionrt::gateway
