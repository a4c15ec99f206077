// heartbeat_run: heartbeats in their own session, where OpenClaw isolates them
// (agents.defaults.heartbeat.isolatedSession [R§1.1]): the router sends a heartbeat for
// session K to `K:heartbeat`; there its text runs as a turn of that session (never rolling it,
// never extending its idle life, like every system event), and the row names K in
// heartbeatIsolatedBaseSessionKey. Such rows are synthetic for maintenance [R§5.2]
// (session_key.hpp is_synthetic_key). The turn itself is session_core::heartbeat_run.
#pragma once
#include <string>
#include <string_view>

namespace sessionrt::actors {

// Whether `key` is an isolated heartbeat session: `<base>:heartbeat` with a non-empty base.
bool is_isolated_heartbeat_key(std::string_view key);
// The base of an isolated heartbeat key ("" if it is not one).
std::string heartbeat_base_key(std::string_view key);

}  // namespace sessionrt::actors
