// chat_events: the payloads of `chat` events (ChatEventSchema), one builder per state:
//   delta  {runId, sessionKey, agentId, seq, state:"delta", deltaText, message:{role:"assistant",
//           content:[{type:"text", text:<all so far>}], timestamp}}
//   final  {..., state:"final", stopReason:"stop", message}   (a command's output is its text)
//   aborted {..., state:"aborted", stopReason:"aborted"}      (the turn was cancelled: /stop, reset)
//   error  {..., state:"error", errorMessage, errorKind}      (timeout | context_length | unknown)
// and a transcript message as chat.history shows it.
#pragma once
#include <boost/json.hpp>
#include <string>

#include "gateway/chat_runs.hpp"
#include "messages/chat_event.hpp"

namespace sessionrt::gateway {

boost::json::object delta_event(const chat_runs::delta& d, std::int64_t ts);

struct closing_event {
  std::string state;  // final | aborted | error
  boost::json::object payload;
};
closing_event run_closing_event(const chat_runs::finished& run, const turn_outcome& out, std::int64_t ts);

boost::json::value history_message(const boost::json::value& context_message);

}  // namespace sessionrt::gateway
