// message_identity: the identities OpenClaw's clients (the web Control UI) give the messages of a
// session, on chat.history / chat.startup pages and session.message events alike:
//   __openclaw {id, seq, runId?} on each message; seq is the message's place in the session's
//   context (1 = the oldest), id is "<sessionId>:<seq>", runId the chat.send run the message
//   belongs to: a user message stored by chat.send carries idempotencyKey "<runId>:user" (and
//   __openclaw.runId), as OpenClaw stores it; the messages after it up to the next user message
//   are that run's.
// Both readers number the same way, so a message pushed as an event and read again with the page
// has the same identity (a compaction renumbers the context: ids are positions, not entries).
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <string>

namespace sessionrt::gateway {

// The run a stored user message names ("" when none): idempotencyKey "<runId>:user", else
// __openclaw.runId.
std::string run_of_user_message(const boost::json::object& message);

// Gives messages[i] the seq first_seq + i; `run` carries the run id across calls (pass "" for a
// page that starts a turn unknown).
void attach_identities(boost::json::array& messages, std::int64_t first_seq, const std::string& session_id,
                       std::string& run);

// What chat.send stores on the user's message: {idempotencyKey: "<runId>:user", __openclaw: {runId}}.
boost::json::object user_message_fields(const std::string& run_id);

}  // namespace sessionrt::gateway
