// user_run_identity: how a user message stored by chat.send names its run, as OpenClaw stores it:
// idempotencyKey "<runId>:user" and __openclaw.runId. Written by the gateway's chat.send, read by
// the gateway's message identities (gateway/message_identity.hpp) and by the session's run dedupe
// (actors/session/run_ids_seen.hpp): one place for both sides.
#pragma once
#include <boost/json/object.hpp>
#include <string>

namespace sessionrt {

// What chat.send stores on the user's message: {idempotencyKey: "<runId>:user", __openclaw: {runId}}.
boost::json::object user_message_fields(const std::string& run_id);

// The run a stored user message names ("" when none): idempotencyKey "<runId>:user", else
// __openclaw.runId.
std::string run_of_user_message(const boost::json::object& message);

}  // namespace sessionrt
