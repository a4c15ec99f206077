// session_keys: a sessionKey from a client, checked and put in the store's form by the routing
// rules (actors/router/session_key.hpp): plausible (1..512 bytes of UTF-8, no control
// characters, no path tricks), normalized (lowercase), "main" and other aliases of the main
// session mapped to agent:<id>:<mainKey>, and its agent configured. An error names the key and
// the rule it broke. Other keys are kept as they are (legacy keys belong to the default agent).
#pragma once
#include <string>

#include "messages/status.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::gateway {

struct resolved_key {
  std::string key;
  std::string agent_id;
};
result<resolved_key> resolve_session_key(const runtime::runtime& rt, const std::string& raw);

}  // namespace sessionrt::gateway
