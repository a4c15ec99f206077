#include "actors/maintenance/maintenance_pass.hpp"

#include <algorithm>

namespace sessionrt::actors {

void index_plan(maintenance_job& job) {
  job.keys_of_session.clear();
  for (const auto& a : job.plan.actions)
    if (a.kind == action_kind::remove_row && !a.session_id.empty()) job.keys_of_session[a.session_id].push_back(a.key);
}

maintenance_batch batch_of(const maintenance_job& job, std::size_t batch_actions, std::int64_t no_updated_at) {
  maintenance_batch b;
  b.begin = job.next;
  b.end = std::min(job.plan.actions.size(), job.next + std::max<std::size_t>(1, batch_actions));
  std::unordered_set<std::string> checked;
  for (std::size_t i = b.begin; i < b.end; ++i) {
    const auto& a = job.plan.actions[i];
    if (a.kind == action_kind::remove_row) {
      b.erase_keys.push_back(a.key);
      b.erase_updated_at.push_back(a.updated_at.value_or(no_updated_at));
      continue;
    }
    if (a.kind == action_kind::archive_row) {
      b.archive_rows.push_back(i);
      continue;
    }
    if (a.session_id.empty()) continue;
    auto it = job.keys_of_session.find(a.session_id);
    if (it == job.keys_of_session.end()) continue;
    for (const auto& k : it->second)
      if (checked.insert(k).second) b.check_keys.push_back(k);
  }
  return b;
}

std::unordered_set<std::string> sessions_to_keep(const maintenance_job& job, const maintenance_batch& batch,
                                                 const batch_checks& checks) {
  std::unordered_set<std::string> keep;
  for (std::size_t i = batch.begin; i < batch.end; ++i) {
    const auto& a = job.plan.actions[i];
    if (a.kind == action_kind::remove_row || a.kind == action_kind::archive_row || a.session_id.empty()) continue;
    auto it = job.keys_of_session.find(a.session_id);
    if (it == job.keys_of_session.end()) continue;
    for (const auto& k : it->second) {
      auto row = checks.row_session.find(k);
      if (checks.busy_keys.count(k) || (row != checks.row_session.end() && row->second == a.session_id))
        keep.insert(a.session_id);
    }
  }
  return keep;
}

boost::json::object action_json(const plan_action& a, std::string_view kind_key) {
  boost::json::object o;
  o["step"] = maintenance_step_name(a.step);
  o[kind_key] = action_kind_name(a.kind);
  if (a.kind == action_kind::remove_row || a.kind == action_kind::archive_row) {
    o["key"] = a.key;
    o["label"] = a.kind == action_kind::archive_row ? row_archive_label(a.step) : row_action_label(a.step);
  } else {
    o["file"] = a.file;
    if (!a.target.empty()) o["target"] = a.target;
  }
  if (!a.session_id.empty()) o["sessionId"] = a.session_id;
  o["bytes"] = a.bytes;
  return o;
}

namespace {

boost::json::object job_json(const maintenance_job& job, bool applied, std::size_t max_actions) {
  const auto& p = job.plan;
  boost::json::object o;
  o["agentId"] = job.agent_id;
  if (!job.shard.empty()) o["shard"] = job.shard;
  o["plan"] = job.reaper ? "cron-reaper" : job.cold ? "cold-storage" : "maintenance";
  o["beforeCount"] = p.before_count;
  o["afterCount"] = p.after_count;
  o["modelRunPruned"] = p.model_run_pruned;
  o["pruned"] = p.pruned;
  o["capped"] = p.capped;
  o["evicted"] = p.evicted;
  o["dashboardsArchived"] = p.dashboards_archived;
  o["ageArchived"] = p.age_archived;
  o["capArchived"] = p.cap_archived;
  o["archivedFiles"] = p.archived_files;
  o["deletedFiles"] = p.deleted_files;
  o["totalBytesBefore"] = p.total_bytes_before;
  o["totalBytesAfter"] = p.total_bytes_after;
  if (p.disk_budget) {
    boost::json::object d;
    d["maxBytes"] = p.disk_budget->max_bytes;
    d["highWaterBytes"] = p.disk_budget->high_water_bytes;
    d["totalBytesBefore"] = p.disk_budget->total_bytes_before;
    d["totalBytesAfter"] = p.disk_budget->total_bytes_after;
    d["overBudget"] = p.disk_budget->over_budget;
    d["met"] = p.disk_budget->met;
    o["diskBudget"] = std::move(d);
  } else {
    o["diskBudget"] = nullptr;
  }
  o["plannedActions"] = p.actions.size();
  if (applied) {
    o["rowsRemoved"] = job.rows_removed;
    o["filesArchived"] = job.files_archived;
    o["filesDeleted"] = job.files_deleted;
    o["rowsArchived"] = job.rows_archived;
    if (job.cold) {
      o["filesCompressed"] = job.files_compressed;
      o["bytesBeforeCompression"] = job.cold_bytes_before;
      o["bytesAfterCompression"] = job.cold_bytes_after;
    }
    boost::json::array skipped;
    for (std::size_t i = 0; i < job.skipped.size() && i < max_actions; ++i) skipped.emplace_back(job.skipped[i]);
    o["skipped"] = job.skipped.size();
    o["skippedReasons"] = std::move(skipped);
  }
  boost::json::array actions;
  for (std::size_t i = 0; i < p.actions.size() && i < max_actions; ++i) actions.emplace_back(action_json(p.actions[i]));
  o["actions"] = std::move(actions);
  boost::json::array warnings;
  for (const auto& w : p.warnings) warnings.emplace_back(w);
  o["warnings"] = std::move(warnings);
  if (!job.error.empty()) o["error"] = job.error;
  return o;
}

}  // namespace

lifecycle_event maintenance_report_event(const std::vector<maintenance_job>& jobs, maintenance_mode mode,
                                         const std::string& trigger, std::int64_t now_ms, std::size_t max_actions) {
  payloads::maintenance_report e;
  const bool applied = mode == maintenance_mode::enforce;
  std::size_t planned = 0, rows = 0, archived = 0, deleted = 0, skipped = 0, rows_archived = 0, compressed = 0;
  std::uint64_t cold_before = 0, cold_after = 0;
  boost::json::array stores;
  for (const auto& j : jobs) {
    planned += j.plan.actions.size();
    rows += j.rows_removed;
    archived += j.files_archived;
    deleted += j.files_deleted;
    skipped += j.skipped.size();
    rows_archived += j.rows_archived;
    compressed += j.files_compressed;
    cold_before += j.cold_bytes_before;
    cold_after += j.cold_bytes_after;
    // The reaper and cold storage apply in warn too.
    stores.emplace_back(job_json(j, applied || j.reaper || j.cold, max_actions));
  }
  e.body["mode"] = maintenance_mode_name(mode);
  e.body["trigger"] = trigger;
  e.body["applied"] = applied;  // session.maintenance's plan; the cron reaper's says per store
  e.body["plannedActions"] = planned;
  e.body["wouldMutate"] = planned > 0;
  e.body["rowsRemoved"] = rows;
  e.body["filesArchived"] = archived;
  e.body["filesDeleted"] = deleted;
  e.body["rowsArchived"] = rows_archived;
  e.body["filesCompressed"] = compressed;
  e.body["bytesBeforeCompression"] = cold_before;
  e.body["bytesAfterCompression"] = cold_after;
  e.body["skipped"] = skipped;
  e.body["stores"] = std::move(stores);
  return payloads::make_event({}, now_ms, e);
}

}  // namespace sessionrt::actors
