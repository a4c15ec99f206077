// cleanup_run: `sessions cleanup` [R§5.5] as a request to a running runtime (the gateway's
// sessions.cleanup, runtime::cleanup) and as the JSON both the CLI and the gateway answer with.
// CAF-free: the maintenance actor runs the request as one pass (maintenance_actor.hpp).
// - cleanup_request: the CLI's options. The plan is forced (every step whatever the count, the
//   unreferenced step also takes orphan transcripts and stale temps); `apply` applies it (the
//   CLI's --enforce, or mode enforce), else it is only planned (a dry run).
// - cleanup_summary_json: one store's summary, the shape `sessions cleanup --json` prints.
// - cleanup_result_json: what the gateway answers: one store's summary, or, for several,
//   {allAgents: true, mode, dryRun, stores: [...]} (OpenClaw's serializeSessionCleanupResult).
#pragma once
#include <boost/json/object.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"

namespace sessionrt::actors {

struct cleanup_request {
  std::string agent_id;  // "" = every agent of the runtime
  bool apply = false;
  maintenance_mode mode = maintenance_mode::warn;  // reported ("enforce" when applying)
  bool fix_missing = false;
  bool fix_dm_scope = false;
  std::string active_key;
};

struct cleanup_store_result {
  std::string agent_id;
  std::string shard;  // a shard's store ("main/017"; a cluster node's), else ""
  std::string store_path;
  maintenance_plan plan;
  bool applied = false;
  std::vector<plan_action> applied_actions;
  std::vector<std::string> skipped;
  std::size_t current_entries = 0;  // after applying
  std::vector<std::string> notes;
  std::string error;  // what stopped the store's cleanup ("" = none)
};

struct cleanup_result {
  maintenance_mode mode = maintenance_mode::warn;
  bool dry_run = true;
  std::vector<cleanup_store_result> stores;
};

boost::json::object cleanup_summary_json(const cleanup_store_result& c, bool dry_run);
boost::json::object cleanup_result_json(const cleanup_result& r, bool all_agents);

}  // namespace sessionrt::actors
