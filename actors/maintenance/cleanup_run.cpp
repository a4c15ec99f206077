#include "actors/maintenance/cleanup_run.hpp"

#include <boost/json.hpp>

#include "actors/maintenance/maintenance_pass.hpp"

namespace sessionrt::actors {

namespace bj = boost::json;

bj::object cleanup_summary_json(const cleanup_store_result& c, bool dry_run) {
  const auto& p = c.plan;
  bj::object o;
  o["agentId"] = c.agent_id;
  if (!c.shard.empty()) o["shard"] = c.shard;
  o["storePath"] = c.store_path;
  o["mode"] = maintenance_mode_name(p.mode);
  o["dryRun"] = dry_run;
  o["beforeCount"] = p.before_count;
  o["afterCount"] = c.applied ? c.current_entries : p.after_count;
  o["repaired"] = 0;
  o["missing"] = p.missing;
  o["dmScopeRetired"] = p.dm_scope_retired;
  o["modelRunPruned"] = p.model_run_pruned;
  o["pruned"] = p.pruned;
  o["capped"] = p.capped;
  // OpenClaw's archived: dashboards and stale rows archived in place; capArchived: the cap's.
  if (p.dashboards_archived + p.age_archived > 0) o["archived"] = p.dashboards_archived + p.age_archived;
  if (p.cap_archived > 0) o["capArchived"] = p.cap_archived;
  o["unreferencedArtifacts"] = bj::object{{"scannedFiles", p.unreferenced.scanned_files},
                                          {"removedFiles", p.unreferenced.removed_files},
                                          {"freedBytes", p.unreferenced.freed_bytes},
                                          {"olderThanMs", p.unreferenced.older_than_ms}};
  if (p.disk_budget) {
    const auto& b = *p.disk_budget;
    o["diskBudget"] = bj::object{{"totalBytesBefore", b.total_bytes_before}, {"totalBytesAfter", b.total_bytes_after},
                                 {"removedFiles", b.removed_files},          {"removedEntries", b.removed_entries},
                                 {"freedBytes", b.freed_bytes},              {"maxBytes", b.max_bytes},
                                 {"highWaterBytes", b.high_water_bytes},     {"overBudget", b.over_budget},
                                 {"met", b.met}};
  } else {
    o["diskBudget"] = nullptr;
  }
  o["wouldMutate"] = p.would_mutate();
  bj::array actions;
  for (const auto& a : (c.applied ? c.applied_actions : p.actions)) actions.push_back(action_json(a, "action"));
  o[c.applied ? "appliedActions" : "actions"] = std::move(actions);
  if (c.applied) {
    o["applied"] = true;
    o["appliedCount"] = c.applied_actions.size();
    bj::array skipped;
    for (const auto& s : c.skipped) skipped.emplace_back(s);
    o["skipped"] = std::move(skipped);
  }
  bj::array warnings;
  for (const auto& w : p.warnings) warnings.emplace_back(w);
  for (const auto& n : c.notes) warnings.emplace_back(n);
  o["warnings"] = std::move(warnings);
  if (!c.error.empty()) o["error"] = c.error;
  return o;
}

bj::object cleanup_result_json(const cleanup_result& r, bool all_agents) {
  if (!all_agents && r.stores.size() == 1) return cleanup_summary_json(r.stores.front(), r.dry_run);
  bj::array stores;
  for (const auto& s : r.stores) stores.push_back(cleanup_summary_json(s, r.dry_run));
  return bj::object{{"allAgents", true},
                    {"mode", maintenance_mode_name(r.mode)},
                    {"dryRun", r.dry_run},
                    {"stores", std::move(stores)}};
}

}  // namespace sessionrt::actors
