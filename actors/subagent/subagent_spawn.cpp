#include "actors/subagent/subagent_spawn.hpp"

#include <fmt/format.h>

#include "actors/router/session_key.hpp"

namespace sessionrt::actors {

result<subagent_plan> plan_subagent(const std::string& parent_key, const std::string& parent_agent,
                                    const session_entry* parent_row, const subagent_spec& spec,
                                    const subagent_limits& limits, const subagent_ids& ids, std::int64_t now_ms) {
  if (!parent_row || !parent_row->session_id())
    return status(errc::not_found, fmt::format("cannot spawn a sub-agent from {:?}: that session does not exist yet "
                                               "(it has no row)",
                                               parent_key.substr(0, 80)));
  if (spec.task.empty()) return status(errc::invalid_argument, "cannot spawn a sub-agent without a task");
  if (spec.task.size() > limits.max_task_bytes)
    return status(errc::limit_exceeded, fmt::format("sub-agent task of {} bytes exceeds session.maxMessageBytes ({} bytes)",
                                                    spec.task.size(), limits.max_task_bytes));
  if (!spec.role.empty() && spec.role != "orchestrator" && spec.role != "leaf")
    return status(errc::invalid_argument,
                  fmt::format("sub-agent role {:?} is not one of \"orchestrator\", \"leaf\"", spec.role.substr(0, 40)));
  if (!spec.control_scope.empty() && spec.control_scope != "children" && spec.control_scope != "none")
    return status(errc::invalid_argument, fmt::format("sub-agent control scope {:?} is not one of \"children\", \"none\"",
                                                      spec.control_scope.substr(0, 40)));
  if (parent_row->subagent_role() == std::optional<std::string_view>("leaf") ||
      parent_row->subagent_control_scope() == std::optional<std::string_view>("none"))
    return status(errc::invalid_argument,
                  fmt::format("{} is a leaf sub-agent (subagentRole leaf / subagentControlScope none): it cannot spawn",
                              parent_key));
  const std::int64_t depth = parent_row->spawn_depth().value_or(0) + 1;
  if (depth > limits.max_spawn_depth)
    return status(errc::limit_exceeded,
                  fmt::format("cannot spawn a sub-agent from {}: it would be at depth {}, past agents.maxSpawnDepth ({})",
                              parent_key, depth, limits.max_spawn_depth));
  const std::string agent = spec.agent_id.empty() ? parent_agent : normalize_agent_id(spec.agent_id);
  const std::string role = !spec.role.empty() ? spec.role : depth < limits.max_spawn_depth ? "orchestrator" : "leaf";
  const std::string scope = !spec.control_scope.empty() ? spec.control_scope : role == "leaf" ? "none" : "children";

  subagent_plan plan;
  plan.child_agent = agent;
  plan.child_key = build_subagent_key(agent, ids.uuid);
  plan.session_id = ids.session_id;
  session_entry& row = plan.row;
  row.set_session_id(ids.session_id);
  row.set_updated_at(now_ms);
  row.set_session_started_at(now_ms);
  row.set_session_file(ids.transcript_path);
  row.set_spawned_by(parent_key);
  row.set_parent_session_key(parent_key);
  if (spec.fork) row.set_forked_from_parent(true);
  row.set_spawn_depth(depth);
  row.set_subagent_role(role);
  row.set_subagent_control_scope(scope);
  if (!spec.label.empty()) row.set_label(spec.label);
  row.set_chat_type("direct");
  row.set_compaction_count(0);
  row.set_total_tokens(0);
  row.set_total_tokens_fresh(true);
  return plan;
}

lifecycle_event subagent_completed_event(const std::string& parent_key, const std::string& parent_agent,
                                         const subagent_plan& plan, const turn_outcome& out,
                                         const std::string& fork_mode, std::int64_t now_ms) {
  payloads::subagent_completed p;
  p.child_session_key = plan.child_key;
  p.child_session_id = out.session_id.empty() ? plan.session_id : out.session_id;
  p.spawn_depth = plan.row.spawn_depth().value_or(0);
  p.fork = fork_mode;
  if (!out.st.ok())
    p.error = out.st.to_string();
  else
    p.reply = out.reply;
  p.suppressed = out.suppressed;
  return payloads::make_event({parent_key, parent_agent, ""}, now_ms, p);
}

lifecycle_event subagent_created_event(const std::string& parent_key, const subagent_plan& plan,
                                       const std::string& fork_mode, std::int64_t now_ms) {
  return payloads::make_event({plan.child_key, plan.child_agent, plan.session_id}, now_ms,
                              payloads::session_created{parent_key, plan.row.spawn_depth().value_or(0), fork_mode});
}

}  // namespace sessionrt::actors
