// message_identity: the identities OpenClaw's clients (the web Control UI) give the messages of a
// session, on chat.history / chat.startup pages and session.message events alike:
//   __openclaw {id, seq, runId?} on each message. id is the transcript entry the message comes
//   from (its own "id"; the compaction's for a compaction summary), as OpenClaw 2026.9.6 sets
//   it (projectTranscriptEntryMessage: id = record.id), so the same message keeps its id across
//   a compaction and the UI's dedupe by id holds. seq is its place in the context (1 = the
//   oldest; totalMessages - seq + 1 is the offset the UI pages by), which a compaction does
//   renumber. runId is the chat.send run the message belongs to: a user message stored by
//   chat.send carries idempotencyKey "<runId>:user" (and __openclaw.runId), as OpenClaw stores
//   it; the messages after it up to the next user message are that run's.
// Both readers take ids and places from runtime::history, so a message pushed as an event and
// read again with a page has the same identity.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/user_run_identity.hpp"

namespace sessionrt::gateway {

// Gives messages[i] the id ids[i] and the seq seqs[i] (runtime::session_history's); `run` carries
// the run id across calls (pass "" for a page that starts a turn unknown).
void attach_identities(boost::json::array& messages, const std::vector<std::string>& ids,
                       const std::vector<std::int64_t>& seqs, std::string& run);

}  // namespace sessionrt::gateway
