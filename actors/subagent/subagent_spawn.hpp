// subagent_spawn: the rules of spawning a sub-agent session from a parent session (OpenClaw's
// sessions_spawn, [R§1.1, R§2.2]). Pure: no CAF, no I/O, no clock.
//   - the child's key is agent:<target>:subagent:<uuid> (target = spec.agent_id, or the
//     parent's agent); its row is created here, before its first turn, with spawnedBy and
//     parentSessionKey (the parent's key), forkedFromParent (when asked to fork; the spawner
//     clears it when the branch was too large and nothing was copied), spawnDepth
//     (the parent's + 1, at most agents.maxSpawnDepth), subagentRole and subagentControlScope
//     (default: "orchestrator"/"children" while the child may still spawn, "leaf"/"none" at
//     the depth limit), and label when given;
//   - refused, with the reason: no parent row, an empty or oversized task, an unknown role or
//     scope, a parent that is a leaf or whose control scope is "none", or the depth limit;
//   - the task runs as the child's first turn; subagent_completed_event() is what the parent's
//     subscribers learn of its end (the reply or the error).
// Sub-agent rows are synthetic for maintenance [R§5.2] (session_key.hpp is_synthetic_key), and
// an explicit /new or /reset in the child keeps the spawn fields [R§4.3] (session_rollover).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "messages/chat_event.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

struct subagent_spec {
  std::string agent_id;       // the child's agent ("" = the parent's)
  std::string task;           // the child's first message
  bool fork = false;          // start from the parent's active branch (fork_planner.hpp)
  std::string role;           // "orchestrator" | "leaf" | "" (by depth)
  std::string control_scope;  // "children" | "none" | "" (by role)
  std::string label;          // the row's label ("" = none)
};

struct subagent_limits {
  std::int64_t max_spawn_depth = 1;      // agents.maxSpawnDepth
  std::size_t max_task_bytes = 1u << 20;  // session.maxMessageBytes
};

struct subagent_plan {
  std::string child_key;
  std::string child_agent;
  std::string session_id;
  session_entry row;  // the child's row as it is stored before its first turn
};

struct subagent_ids {
  std::string uuid;             // the key's <uuid>
  std::string session_id;       // the child's sessionId
  std::string transcript_path;  // its sessionFile (absolute)
};

// `parent_agent` is the agent whose store holds `parent_row` (nullptr: the parent has no row).
result<subagent_plan> plan_subagent(const std::string& parent_key, const std::string& parent_agent,
                                    const session_entry* parent_row, const subagent_spec& spec,
                                    const subagent_limits& limits, const subagent_ids& ids, std::int64_t now_ms);

// subagent.completed, published under the parent's key: childSessionKey, childSessionId,
// spawnDepth, forked (fork mode or absent), and reply (nullopt when suppressed) or error.
lifecycle_event subagent_completed_event(const std::string& parent_key, const std::string& parent_agent,
                                         const subagent_plan& plan, const turn_outcome& out,
                                         const std::string& fork_mode, std::int64_t now_ms);

// session.created for the child (before its first turn): spawnedBy, spawnDepth, fork mode.
lifecycle_event subagent_created_event(const std::string& parent_key, const subagent_plan& plan,
                                       const std::string& fork_mode, std::int64_t now_ms);

}  // namespace sessionrt::actors
