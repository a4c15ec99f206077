#include "actors/maintenance/cold_storage_planner.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "storage/archive_names.hpp"

namespace sessionrt::actors {
namespace {

plan_action file_action(action_kind kind, const indexed_file& f) {
  plan_action a;
  a.step = maintenance_step::cold_storage;
  a.kind = kind;
  a.file = f.name;
  a.session_id = std::string(f.session_id());
  a.bytes = f.size;
  a.mtime_ms = f.mtime_ms;
  return a;
}

}  // namespace

maintenance_plan plan_cold_storage(const cold_storage_input& in) {
  maintenance_plan plan;
  plan.mode = in.settings.mode;
  if (!in.settings.cold_storage_enabled || !in.rows || !in.index) return plan;
  const auto& rows = *in.rows;
  const dir_index& index = *in.index;
  plan.before_count = plan.after_count = rows.size();
  const std::int64_t cutoff = in.now_ms - in.settings.cold_storage_after_days * day_ms;

  std::unordered_map<std::string_view, int> refs;  // session id -> rows referencing it
  for (const auto& r : rows)
    for (auto id : {r.session_id(), r.other_file_session_id()})
      if (!id.empty()) ++refs[id];
  const std::unordered_set<std::string_view> preserved(in.preserve_keys.begin(), in.preserve_keys.end());

  struct candidate {
    const maintenance_row* row;
    const indexed_file* file;
  };
  std::vector<candidate> eligible;
  for (const auto& r : rows) {
    const std::string name = r.transcript_name();
    if (name.empty()) continue;
    const indexed_file* f = index.find(name);
    if (!f) continue;
    if (const indexed_file* leftover = index.find(name + ".zst")) {
      plan.actions.push_back(file_action(action_kind::delete_file, *leftover));
      ++plan.deleted_files;
      continue;  // compressed again on a later pass, if still eligible
    }
    if (!storage::is_transcript_kind(f->kind) || f->session_id().empty()) continue;
    if (!r.other_file_session_id().empty() || refs[r.session_id()] != 1 || refs[f->session_id()] != 1) continue;
    if (r.running || preserved.count(r.key()) || r.activity_at >= cutoff || f->mtime_ms >= cutoff) continue;
    eligible.push_back({&r, f});
  }
  std::sort(eligible.begin(), eligible.end(), [](const candidate& a, const candidate& b) {
    return a.file->mtime_ms != b.file->mtime_ms ? a.file->mtime_ms < b.file->mtime_ms : a.file->name < b.file->name;
  });
  for (const auto& c : eligible) {
    if (plan.cold_files >= in.max_files) break;
    if (plan.cold_files > 0 && plan.cold_raw_bytes + c.file->size > in.max_bytes) break;
    plan_action a = file_action(action_kind::compress_file, *c.file);
    a.key = std::string(c.row->key());
    a.updated_at = c.row->updated_at;
    plan.actions.push_back(std::move(a));
    ++plan.cold_files;
    plan.cold_raw_bytes += c.file->size;
  }

  // Temps of a compression or a restore that did not finish (the process died).
  for (const auto& f : index.by_name()) {
    if (f.kind != storage::artifact_kind::temp || f.mtime_ms >= in.now_ms - in.stale_temp_ms) continue;
    if (!storage::holds_transcript(storage::classify(storage::classify(f.name).base).kind)) continue;
    plan.actions.push_back(file_action(action_kind::delete_file, f));
    ++plan.deleted_files;
  }
  std::uint64_t bytes = index.bytes();
  plan.total_bytes_before = plan.total_bytes_after = bytes;
  return plan;
}

}  // namespace sessionrt::actors
