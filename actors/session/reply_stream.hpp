// reply_stream: a streamed model reply turned into reply.delta events (SPEC §4, [R§7.3]).
// One per model call of a turn (an "attempt"). Text pieces go through silent_reply_filter, so a
// NO_REPLY (or a prefix that may still become one, or a trailing token) is never shown; what
// the filter releases is published at once as reply.delta {text, attempt, index}. end() sends
// the last delta of the attempt: the held text still to show (when the reply is kept), done,
// silent, discarded. No CAF here: `publish` is the session actor's immediate publish.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "actors/session/silent_reply.hpp"
#include "messages/clock.hpp"
#include "messages/lifecycle_payloads.hpp"

namespace sessionrt::actors {

class reply_stream {
 public:
  reply_stream(std::function<void(lifecycle_event)> publish, const clock& time, payloads::event_subject session,
               int attempt);

  void on_text(std::string_view piece);
  // The model call returned. kept: the reply is the turn's (not dropped for a retry or an
  // error). Publishes the closing delta only if any text was streamed.
  void end(bool kept);

 private:
  void emit(std::string text, bool done, bool silent, bool discarded);

  std::function<void(lifecycle_event)> publish_;
  const clock& time_;
  payloads::event_subject session_;
  int attempt_;
  int index_ = 0;
  bool streamed_ = false;
  silent_reply_filter filter_;
};

}  // namespace sessionrt::actors
