// chat_delivery: a run's `chat` events on their way to the frame sink, which sends them to the
// connection that sent the chat.send and to the connections watching the session
// (frame_sink::to_session): the deltas as the event bus forwards the reply.delta events, the
// closing event (final / aborted / error) at the turn's acknowledgement — held, when the turn
// published its turn event (turn_outcome::turn_event), until that event came through the bus
// after the last delta (chat_runs). Bus events are joined to their run by data.runId; those
// without one (not a gateway run) are ignored. kClosingHold bounds a hold, a safety net only: a
// lost event must not hold a final for ever.
#pragma once
#include <chrono>
#include <string>

#include "gateway/gateway_core.hpp"
#include "messages/chat_event.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::gateway {

inline constexpr std::chrono::milliseconds kClosingHold{2000};

void chat_reply_delta(gateway_core& core, const lifecycle_event& reply_delta);
// A turn.completed / turn.failed / turn.cancelled event.
void chat_turn_ended(gateway_core& core, const lifecycle_event& turn_end);
void chat_acknowledged(gateway_core& core, const std::string& run_id, turn_outcome out);

}  // namespace sessionrt::gateway
