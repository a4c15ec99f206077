// session_keys: a sessionKey from a client, checked and put in the store's form once, at the
// gateway's edge, for every method: plausible (1..512 bytes of UTF-8, no control characters,
// no path tricks), then exactly the key the session will be stored under
// (actors::explicit_store_key: "probe2" -> "agent:<agent>:probe2", "main" and other aliases of
// the main session -> agent:<id>:<mainKey>), and its agent configured. `agent_id` (a method's
// agentId param) is the agent of a key without "agent:<id>:"; empty = the default agent. An
// error names the key and the rule it broke.
#pragma once
#include <string>

#include "messages/status.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::gateway {

struct resolved_key {
  std::string key;
  std::string agent_id;
};
result<resolved_key> resolve_session_key(const runtime::runtime& rt, const std::string& raw,
                                         const std::string& agent_id = "");

}  // namespace sessionrt::gateway
