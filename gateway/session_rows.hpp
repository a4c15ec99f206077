// session_rows: a stored row as the gateway protocol shows it (sessions.list rows,
// sessions.describe, sessions.changed, chat.history's sessionInfo), with the fields
// real-gateway-session-methods.jsonl shows the real server send: key, sessionId, kind, agentId,
// label, displayName, updatedAt, createdAt, modelProvider, model, contextTokens, inputTokens,
// outputTokens, totalTokens, totalTokensFresh, status, hasActiveRun, thinkingLevel,
// effectiveQueueMode, ... Values the row does not hold come from `defaults`.
#pragma once
#include <boost/json.hpp>
#include <string>
#include <vector>

#include "runtime/runtime.hpp"

namespace sessionrt::gateway {

struct row_defaults {
  std::string provider, model;
  std::int64_t context_tokens = 0;
  std::string queue_mode = "followup";
  std::string main_key = "agent:main:main";
};

row_defaults defaults_of(const runtime::runtime& rt, const std::string& provider, const std::string& model);
boost::json::object session_row_json(const runtime::session_row& row, const row_defaults& d,
                                     const std::vector<std::string>& active_run_ids);
// The `entry` of sessions.patch / sessions.reset answers: the stored row as it is.
boost::json::object entry_json(const runtime::session_row& row);
// {modelProvider, model} in effect for the row.
boost::json::object resolved_json(const runtime::session_row& row, const row_defaults& d);
// The defaults block of sessions.list / chat.history.
boost::json::object defaults_json(const row_defaults& d);

}  // namespace sessionrt::gateway
