// chat_delivery: a run's `chat` events on their way to the frame sink, which sends them to the
// connection that sent the chat.send and to the connections watching the session
// (frame_sink::to_session): the deltas as the event bus forwards the reply.delta events, the
// closing event (final / aborted / error) at the turn's acknowledgement — held, when the turn
// called the model, until the session's turn event came through the bus after the last delta
// (chat_runs), for at most kClosingHold, so that a lost event cannot hold a final for ever.
#pragma once
#include <chrono>
#include <string>

#include "gateway/gateway_core.hpp"
#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::gateway {

inline constexpr std::chrono::milliseconds kClosingHold{2000};

// Whether the turn called the model (a turn.completed / turn.failed / turn.cancelled event then
// follows its reply.delta events on the bus): not for a command, nor for a run refused before
// its turn ran ("dropped by /stop", "the runtime is stopping", a store that could not open).
bool turn_ran_model(const turn_outcome& out);

void chat_reply_delta(gateway_core& core, const lifecycle_event& reply_delta);
void chat_turn_ended(gateway_core& core, const std::string& session_key);
void chat_acknowledged(gateway_core& core, const std::string& run_id, turn_outcome out);

}  // namespace sessionrt::gateway
