// session_notify: the sessions.changed event {sessionKey, agentId, reason, ts, session: row}
// sent to every connection that called sessions.subscribe (one builder for every reason:
// patch, send, reset, delete, compact).
#pragma once
#include <cstdint>
#include <string>

#include "gateway/gateway_core.hpp"

namespace sessionrt::gateway {

void notify_session_changed(gateway_core& core, const runtime::session_row& row, const std::string& reason);
// The same for a key whose row is read from the store first (nothing sent when it has none).
void notify_session_changed(gateway_core& core, const std::string& key, const std::string& agent_id,
                            const std::string& reason);

}  // namespace sessionrt::gateway
