#include "actors/maintenance/maintenance_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <unordered_map>

#include "actors/maintenance/dashboard_archive.hpp"
#include "actors/router/protected_key.hpp"
#include "actors/router/session_key.hpp"
#include "messages/json_access.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::actors {

const char* maintenance_step_name(maintenance_step step) noexcept {
  switch (step) {
    case maintenance_step::fix_missing: return "fix-missing";
    case maintenance_step::fix_dm_scope: return "fix-dm-scope";
    case maintenance_step::model_run: return "model-run";
    case maintenance_step::stale: return "stale";
    case maintenance_step::cap: return "cap";
    case maintenance_step::unreferenced: return "unreferenced";
    case maintenance_step::archive_retention: return "archive-retention";
    case maintenance_step::budget_files: return "budget-files";
    case maintenance_step::budget_rows: return "budget-rows";
    case maintenance_step::cron_reaper: return "cron-reaper";
    case maintenance_step::archive_dashboards: return "archive-dashboards";
    case maintenance_step::cold_storage: return "cold-storage";
  }
  return "?";
}

const char* row_action_label(maintenance_step step) noexcept {
  switch (step) {
    case maintenance_step::fix_missing: return "prune-missing";
    case maintenance_step::fix_dm_scope: return "retire-dm-scope";
    case maintenance_step::model_run: return "prune-model-run";
    case maintenance_step::stale: return "prune-stale";
    case maintenance_step::cap: return "cap-overflow";
    case maintenance_step::budget_rows: return "evict-budget";
    case maintenance_step::cron_reaper: return "reap-cron-run";
    case maintenance_step::archive_dashboards: return "archive-dashboard";
    default: return "keep";
  }
}

const char* row_archive_label(maintenance_step step) noexcept {
  switch (step) {
    case maintenance_step::stale: return "archive-age";
    case maintenance_step::cap: return "archive-cap";
    default: return "archive-dashboard";
  }
}

std::string_view row_archive_reason(maintenance_step step) noexcept {
  switch (step) {
    case maintenance_step::stale: return "age-retention";
    case maintenance_step::cap: return "active-session-cap";
    default: return stale_dashboard_reason;
  }
}

const char* action_kind_name(action_kind kind) noexcept {
  switch (kind) {
    case action_kind::remove_row: return "remove-row";
    case action_kind::archive_file: return "archive-file";
    case action_kind::delete_file: return "delete-file";
    case action_kind::archive_row: return "archive-row";
    case action_kind::compress_file: return "compress-file";
  }
  return "?";
}

std::uint64_t projected_store_bytes(std::uint64_t sum_text_bytes, std::size_t rows, bool trailing_newline) {
  std::uint64_t bytes = rows == 0 ? 2 : sum_text_bytes + (rows - 1) + 3;  // "{}" | "{" rows joined by "," "\n}"
  return bytes + (trailing_newline ? 1 : 0);
}

maintenance_row::maintenance_row(std::string_view key, std::string_view session_id, std::string_view session_file,
                                 std::string_view label, std::string_view model) {
  std::string_view file_id;
  if (!session_file.empty()) {
    const bool own = session_file.size() == session_id.size() + 6 && session_file.substr(0, session_id.size()) == session_id &&
                     session_file.substr(session_id.size()) == ".jsonl";
    if (own) {
      session_file = {};
    } else {
      // A slice of session_file (classify takes the id from the name).
      const auto id = storage::classify(session_file).session_id;
      if (!id.empty() && id != session_id) file_id = session_file.substr(session_file.find(id), id.size());
    }
  }
  const std::string_view parts[] = {key, session_id, session_file, file_id, label, model};
  std::size_t total = 0;
  for (auto p : parts) total += p.size();
  text_.reserve(total);
  for (std::size_t i = 0; i < 6; ++i) {
    text_.append(parts[i]);
    if (i < ends_.size()) ends_[i] = static_cast<std::uint32_t>(text_.size());
  }
}

std::string maintenance_row::transcript_name() const {
  if (auto file = part(2); !file.empty()) return std::string(file);
  if (auto id = session_id(); !id.empty()) return std::string(id) + ".jsonl";
  return {};
}

maintenance_row maintenance_row_of(std::string_view key, const session_entry& entry, std::string_view sessions_dir) {
  std::string_view session_id = entry.session_id().value_or("");
  std::string file_name;
  if (auto file = entry.session_file(); file && !file->empty()) {
    std::string dir = storage::path_dirname(*file);
    bool here = file->find('/') == std::string_view::npos || sessions_dir.empty() || dir == sessions_dir;
    if (here) file_name = storage::path_basename(*file);
  }
  std::string_view model;
  if (auto m = entry.model_override(); m && !m->empty())
    model = *m;
  else if (auto m2 = entry.model())
    model = *m2;
  maintenance_row row(key, session_id, file_name, entry.label().value_or(""), model);
  row.updated_at = entry.updated_at();
  const auto& o = entry.json();
  row.archived = o.contains("archivedAt");
  if (const auto* at = o.if_contains("archivedAt"))
    if (auto n = json::as_number(*at); n && *n > -9e15 && *n < 9e15) row.archived_at = static_cast<std::int64_t>(*n);
  row.cap_archived = row.archived && json::get_string(o, "archiveReason") == std::optional<std::string_view>("active-session-cap");
  row.pinned = o.contains("pinnedAt") && is_pinnable_row(key, entry);
  row.model_locked = json::get_bool(o, "modelSelectionLocked") == std::optional<bool>(true);
  row.running = entry.status() == std::optional<std::string_view>("running");
  for (std::string_view field : {"lastInteractionAt", "lastActivityAt", "sessionStartedAt", "updatedAt"})
    if (const auto* v = entry.json().if_contains(field))
      if (auto n = json::as_number(*v); n && *n > double(row.activity_at) && *n < 9e15)
        row.activity_at = static_cast<std::int64_t>(*n);
  std::string text;
  storage::session_store::append_row_text(text, key, entry);
  row.text_bytes = text.size();
  // OpenClaw's isSyntheticSessionMaintenanceKey: is_synthetic_key's rows and model-run probes.
  row.synthetic = is_synthetic_key(key) || is_model_run_key(key);
  row.is_protected = is_protected_key(key, &entry);
  return row;
}

std::vector<maintenance_row> maintenance_rows(const storage::session_store& store, std::string_view sessions_dir) {
  std::vector<maintenance_row> rows;
  rows.reserve(store.size());
  for (auto r : store) rows.push_back(maintenance_row_of(r.key, r.entry, sessions_dir));
  return rows;
}

bool is_per_peer_direct_key(std::string_view key) {
  auto parsed = parse_agent_session_key(key);
  if (!parsed) return false;
  // direct:<id> | <ch>:direct:<id> | <ch>:<acct>:direct:<id>
  std::vector<std::string_view> parts;
  std::string_view rest = parsed->rest;
  std::size_t start = 0;
  while (true) {
    auto colon = rest.find(':', start);
    parts.push_back(rest.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  auto direct_at = [&](std::size_t i) { return parts.size() == i + 2 && parts[i] == "direct" && !parts[i + 1].empty(); };
  return direct_at(0) || direct_at(1) || direct_at(2);
}

const char* row_label_in(const maintenance_plan& plan, std::string_view key) {
  const char* label = "keep";
  for (const auto& a : plan.actions) {
    if (a.key != key) continue;
    if (a.kind == action_kind::remove_row) return row_action_label(a.step);
    if (a.kind == action_kind::archive_row) label = row_archive_label(a.step);
  }
  return label;
}

namespace {

// A file the plan acted on or looked at closely: its state as the plan leaves it (an archived
// file has its archive's name and kind).
struct file_state {
  std::string name;
  std::uint64_t size = 0;
  std::int64_t mtime_ms = 0;
  storage::artifact_name kind;
  bool alive = true;
};

class planner {
 public:
  planner(const planner_input& in, const dir_index& index) : in_(in), rows_(*in.rows), index_(index) {
    plan_.mode = in.settings.mode;
    plan_.forced = in.forced;
    plan_.before_count = rows_.size();
    removed_.assign(rows_.size(), false);
    keep_always_.assign(rows_.size(), false);
    kept_unprotected_.assign(rows_.size(), false);
    archived_bytes_.assign(rows_.size(), 0);
    archived_.assign(rows_.size(), false);
    archived_at_.assign(rows_.size(), 0);
    cap_archived_.assign(rows_.size(), false);
    std::unordered_set<std::string_view> preserve(in.preserve_keys.begin(), in.preserve_keys.end());
    if (!in.active_key.empty()) preserve.insert(in.active_key);
    std::uint64_t text_sum = 0;
    refs_.reserve(rows_.size() * 2);  // built whole each pass; unreserved it rehashed as it filled
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      const bool recent = in.settings.preserve_recent_ms && !r.synthetic && r.activity_at > 0 &&
                          in.now_ms - r.activity_at <= *in.settings.preserve_recent_ms;
      // OpenClaw's shouldPreserveNonArchivedMaintenanceEntry.
      kept_unprotected_[i] = recent || r.pinned || r.model_locked || r.running || preserve.count(r.key()) > 0;
      keep_always_[i] = r.is_protected || kept_unprotected_[i];
      archived_[i] = r.archived;
      archived_at_[i] = r.archived_at;
      cap_archived_[i] = r.cap_archived;
      if (!r.archived) ++unarchived_;
      text_sum += r.text_bytes;
      for (auto id : ids_of(r))
        if (!id.empty()) ++refs_[id];
    }
    live_rows_ = rows_.size();
    store_text_sum_ = text_sum;
    // Every file counts but the store (its projected size replaces it) and young store temps.
    files_bytes_ = index_.bytes();
    if (const auto* store = index_.find(in.store_file)) files_bytes_ -= store->size;
    for (const auto& t : index_.store_temps())
      if (!counted(t)) files_bytes_ -= t.size;
    plan_.total_bytes_before = total();
  }

  maintenance_plan run() {
    const auto hw = cap_high_water(in_.settings);
    if (in_.fix_missing) step_fix_missing();
    if (in_.fix_dm_scope) step_fix_dm_scope();
    // shouldRunModelRunPrune: forced (cleanup) only over maxEntries, else at the high water;
    // the unarchived count either way, as the cap.
    if (in_.forced ? static_cast<std::int64_t>(unarchived_) > in_.settings.max_entries
                   : static_cast<std::int64_t>(unarchived_) >= hw)
      step_model_run();
    if (in_.settings.archive_dashboard_after_ms) step_archive_dashboards();
    step_stale();
    if (in_.forced ? static_cast<std::int64_t>(unarchived_) > in_.settings.max_entries
                   : static_cast<std::int64_t>(unarchived_) >= hw)
      step_cap();
    step_unreferenced();
    step_archive_retention();
    if (in_.settings.max_disk_bytes) step_budget();
    plan_.after_count = live_rows_;
    plan_.total_bytes_after = total();
    return std::move(plan_);
  }

 private:
  // The session ids a row keeps referenced: its sessionId and the id its sessionFile names.
  static std::array<std::string_view, 2> ids_of(const maintenance_row& r) {
    return {r.session_id(), r.other_file_session_id()};
  }

  // A young temp file is the store's write in flight: it becomes sessions.json, whose projected
  // size is counted already. (Counting it would also make the total depend on whether the
  // listing caught the write.)
  bool counted(const indexed_file& f) const {
    if (f.name == in_.store_file) return false;
    return f.kind != storage::artifact_kind::store_temp || storage::is_stale_store_temp(f.kind, f.mtime_ms, in_.now_ms);
  }

  // The plan's state of a counted file of the index, entered on first use.
  std::size_t touch(const indexed_file& f) {
    auto [it, added] = touched_.try_emplace(f.name, files_.size());
    if (added) files_.push_back(file_state{f.name, f.size, f.mtime_ms, storage::classify(f.name), true});
    return it->second;
  }
  const file_state* touched(const std::string& name) const {
    auto it = touched_.find(name);
    return it == touched_.end() ? nullptr : &files_[it->second];
  }

  std::uint64_t total() const {
    return files_bytes_ + projected_store_bytes(store_text_sum_, live_rows_);
  }

  bool referenced(std::string_view session_id) const {
    auto it = refs_.find(session_id);
    return it != refs_.end() && it->second > 0;
  }

  // Removes row i (not protected / preserved: the caller checked).
  void remove_row(std::size_t i, maintenance_step step) {
    const auto& r = rows_[i];
    removed_[i] = true;
    --live_rows_;
    if (!archived_[i]) --unarchived_;
    store_text_sum_ -= r.text_bytes + archived_bytes_[i];  // an archived row takes its new fields along
    for (auto id : ids_of(r)) {
      auto it = id.empty() ? refs_.end() : refs_.find(id);
      if (it != refs_.end() && --it->second == 0) orphaned_.emplace_back(id);
    }
    plan_action a;
    a.step = step;
    a.kind = action_kind::remove_row;
    a.key = std::string(r.key());
    a.updated_at = r.updated_at;
    a.session_id = std::string(r.session_id());
    a.bytes = r.text_bytes;
    plan_.actions.push_back(std::move(a));
    switch (step) {
      case maintenance_step::fix_missing: ++plan_.missing; break;
      case maintenance_step::fix_dm_scope: ++plan_.dm_scope_retired; break;
      case maintenance_step::model_run: ++plan_.model_run_pruned; break;
      case maintenance_step::stale: ++plan_.pruned; break;
      case maintenance_step::cap: ++plan_.capped; break;
      case maintenance_step::budget_rows: ++plan_.evicted; break;
      default: break;
    }
  }

  // May a step remove or archive row i? Archived rows are exempt (phase C picks its own).
  bool removable(std::size_t i) const { return !removed_[i] && !keep_always_[i] && !archived_[i]; }
  // For the cleanup fixes (fix-missing, fix-dm-scope): protection does not keep a row from them
  // (OpenClaw 2026.9 retires a per-peer DM key, itself protected, and a protected row whose
  // transcript is gone); the other reasons to keep a row do.
  bool fixable(std::size_t i) const { return !removed_[i] && !kept_unprotected_[i] && !archived_[i]; }

  // Archives row i in place (removable: the caller checked); it keeps its transcript.
  void archive_row(std::size_t i, maintenance_step step) {
    const auto& r = rows_[i];
    archived_[i] = true;
    --unarchived_;
    archived_at_[i] = in_.now_ms;
    cap_archived_[i] = step == maintenance_step::cap;
    plan_action a;
    a.step = step;
    a.kind = action_kind::archive_row;
    a.key = std::string(r.key());
    a.updated_at = r.updated_at;
    a.session_id = std::string(r.session_id());
    a.at_ms = in_.now_ms;
    a.bytes = archived_row_extra_bytes(in_.now_ms, row_archive_reason(step));
    store_text_sum_ += a.bytes;
    archived_bytes_[i] = a.bytes;
    plan_.actions.push_back(std::move(a));
    switch (step) {
      case maintenance_step::stale: ++plan_.age_archived; break;
      case maintenance_step::cap: ++plan_.cap_archived; break;
      default: ++plan_.dashboards_archived; break;
    }
  }

  std::string unique_archive_name(const std::string& file) {
    std::int64_t ts = in_.now_ms;
    std::string name = storage::archive_name(file, storage::archive_reason::deleted, ts);
    while (index_.find(name) || made_names_.count(name))
      name = storage::archive_name(file, storage::archive_reason::deleted, ++ts);
    made_names_.insert(name);
    return name;
  }

  void file_action(std::size_t fi, maintenance_step step, action_kind kind) {
    file_state& f = files_[fi];
    plan_action a;
    a.step = step;
    a.kind = kind;
    a.file = f.name;
    a.session_id = f.kind.session_id;
    a.bytes = f.size;
    a.mtime_ms = f.mtime_ms;
    if (kind == action_kind::archive_file) {
      a.target = unique_archive_name(f.name);
      ++plan_.archived_files;
      // The archive takes the file's place (rename keeps size and mtime).
      f.name = a.target;
      f.kind = storage::classify(f.name);
    } else {
      f.alive = false;
      files_bytes_ -= f.size;
      ++plan_.deleted_files;
    }
    plan_.actions.push_back(std::move(a));
  }

  // Archives the transcripts and deletes the sidecars of a session no row references.
  void retire_session_files(const std::string& session_id, maintenance_step step, bool delete_outright) {
    for (const auto& indexed : index_.session_files(session_id)) {
      if (!counted(indexed)) continue;
      const std::size_t fi = touch(indexed);
      file_state& f = files_[fi];
      if (!f.alive) continue;
      const auto k = f.kind.kind;
      if (storage::holds_transcript(k)) {
        file_action(fi, step, delete_outright ? action_kind::delete_file : action_kind::archive_file);
      } else if (k == storage::artifact_kind::trajectory || k == storage::artifact_kind::trajectory_pointer) {
        file_action(fi, step, action_kind::delete_file);
      }
    }
  }

  void step_fix_missing() {
    auto listed = [&](const std::string& name) {
      const auto* f = index_.find(name);
      return f && counted(*f);
    };
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (!fixable(i)) continue;
      const auto& r = rows_[i];
      const std::string file = r.transcript_name();
      // A transcript kept compressed is there (and never empty: cold storage takes only old ones).
      bool missing = file.empty() || (!listed(file) && !listed(file + ".zst")) ||
                     (in_.empty_transcripts && in_.empty_transcripts->count(file));
      if (missing) remove_row(i, maintenance_step::fix_missing);
    }
    flush_files(maintenance_step::fix_missing);
  }

  void step_fix_dm_scope() {
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (fixable(i) && is_per_peer_direct_key(rows_[i].key())) remove_row(i, maintenance_step::fix_dm_scope);
    flush_files(maintenance_step::fix_dm_scope);
  }

  void step_model_run() {
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      if (removable(i) && r.updated_at && *r.updated_at < in_.now_ms - model_run_retention_ms && is_model_run_key(r.key()))
        remove_row(i, maintenance_step::model_run);
    }
  }

  // Synthetic rows are removed; the others are archived in place (pruneStaleEntries).
  void step_stale() {
    const std::int64_t cutoff = in_.now_ms - in_.settings.prune_after_ms;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const auto& r = rows_[i];
      if (!removable(i) || !r.updated_at || *r.updated_at >= cutoff) continue;
      if (r.synthetic)
        remove_row(i, maintenance_step::stale);
      else
        archive_row(i, maintenance_step::stale);
    }
  }

  // Least recently active first (activity_at; none first), ties by key. OpenClaw keeps ties in
  // its store's order; here the order of rows put in one millisecond is the order concurrent
  // sessions' puts reached the store (thread timing), which would make a replay cap different
  // sessions.
  std::vector<std::size_t> removable_least_active_first() const {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (removable(i)) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto ta = rows_[a].activity_at, tb = rows_[b].activity_at;
      return ta != tb ? ta < tb : rows_[a].key() < rows_[b].key();
    });
    return order;
  }

  // selectSessionEntryCapVictims + capEntryCount: as many rows as the unarchived count passes
  // maxEntries (protected and preserved rows count but never change, so a store can stay above
  // the cap); synthetic victims removed, the others archived in place.
  void step_cap() {
    const std::int64_t overflow = static_cast<std::int64_t>(unarchived_) - std::max<std::int64_t>(0, in_.settings.max_entries);
    if (overflow <= 0) return;
    auto order = removable_least_active_first();
    const std::size_t victims = std::min<std::size_t>(static_cast<std::size_t>(overflow), order.size());
    for (std::size_t n = 0; n < victims; ++n) {
      if (rows_[order[n]].synthetic)
        remove_row(order[n], maintenance_step::cap);
      else
        archive_row(order[n], maintenance_step::cap);
    }
  }

  // Before the stale step, as OpenClaw's write profile runs it: a stale dashboard row older
  // than pruneAfter too is archived as "stale-dashboard".
  void step_archive_dashboards() {
    const std::int64_t after = *in_.settings.archive_dashboard_after_ms;
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (removable(i) && is_stale_dashboard(rows_[i], after, in_.now_ms)) archive_row(i, maintenance_step::archive_dashboards);
  }

  // Phase C's candidates (isSessionEntryDiskBudgetEvictable): rows archived by the cap, not
  // otherwise preserved, oldest archivedAt first, ties by key.
  std::vector<std::size_t> cap_archived_oldest_first() const {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (!removed_[i] && !keep_always_[i] && archived_[i] && cap_archived_[i]) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return archived_at_[a] != archived_at_[b] ? archived_at_[a] < archived_at_[b] : rows_[a].key() < rows_[b].key();
    });
    return order;
  }

  // The files of sessions orphaned by the row removals so far, under `step`.
  void flush_files(maintenance_step step, bool delete_outright = false) {
    auto orphans = std::move(orphaned_);
    orphaned_.clear();
    for (const auto& id : orphans)
      if (!referenced(id)) retire_session_files(id, step, delete_outright);
  }

  void step_unreferenced() {
    flush_files(maintenance_step::unreferenced);
    if (!in_.forced) return;
    auto& rep = plan_.unreferenced;
    rep.older_than_ms = in_.settings.prune_after_ms;
    const std::int64_t cutoff = in_.now_ms - in_.settings.prune_after_ms;
    for (const auto& indexed : index_.by_name()) {
      if (!counted(indexed)) continue;
      const std::size_t fi = touch(indexed);
      file_state& f = files_[fi];
      if (!f.alive) continue;
      ++rep.scanned_files;
      const auto k = f.kind.kind;
      if (k == storage::artifact_kind::store_temp) {
        if (storage::is_stale_store_temp(f.kind, f.mtime_ms, in_.now_ms)) {
          ++rep.removed_files;
          rep.freed_bytes += f.size;
          file_action(fi, maintenance_step::unreferenced, action_kind::delete_file);
        }
        continue;
      }
      bool transcript = storage::holds_transcript(k);
      bool sidecar = k == storage::artifact_kind::trajectory || k == storage::artifact_kind::trajectory_pointer;
      if (!(transcript || sidecar) || f.kind.session_id.empty() || referenced(f.kind.session_id)) continue;
      if (f.mtime_ms >= cutoff) continue;
      ++rep.removed_files;
      if (transcript) {
        file_action(fi, maintenance_step::unreferenced, action_kind::archive_file);
      } else {
        rep.freed_bytes += f.size;
        file_action(fi, maintenance_step::unreferenced, action_kind::delete_file);
      }
    }
  }

  void step_archive_retention() {
    const auto reset_keep = reset_archive_retention(in_.settings);
    // The candidates from the index's archive timestamps, acted on in name order. An archive
    // this plan made is stamped now or later: never older than a retention.
    std::set<std::string_view> candidates;
    auto older = [&](const dir_index::range& order, std::int64_t keep) {
      for (const auto& f : order) {
        if (*f.timestamp_ms() >= in_.now_ms - keep) break;
        candidates.insert(f.name);
      }
    };
    older(index_.deleted_archives(), in_.settings.prune_after_ms);
    if (reset_keep) older(index_.reset_archives(), *reset_keep);
    for (auto name : candidates) {
      const auto* indexed = index_.find(name);
      if (!indexed || !counted(*indexed)) continue;
      const std::size_t fi = touch(*indexed);
      const file_state& f = files_[fi];
      if (!f.alive || !f.kind.timestamp_ms) continue;
      std::optional<std::int64_t> keep;
      if (f.kind.kind == storage::artifact_kind::deleted_archive)
        keep = in_.settings.prune_after_ms;
      else if (f.kind.kind == storage::artifact_kind::reset_archive)
        keep = reset_keep;
      if (keep && *f.kind.timestamp_ms < in_.now_ms - *keep)
        file_action(fi, maintenance_step::archive_retention, action_kind::delete_file);
    }
  }

  bool budget_removable_file(storage::artifact_kind k, std::string_view session_id, std::int64_t mtime_ms) const {
    if (k == storage::artifact_kind::store_temp) return storage::is_stale_store_temp(k, mtime_ms, in_.now_ms);
    if (storage::is_archive_kind(k)) return true;
    if (storage::holds_transcript(k) || k == storage::artifact_kind::trajectory ||
        k == storage::artifact_kind::trajectory_pointer)
      return !session_id.empty() && !referenced(session_id);
    return false;
  }

  void step_budget() {
    disk_budget_report rep;
    rep.max_bytes = *in_.settings.max_disk_bytes;
    rep.high_water_bytes = *high_water_bytes(in_.settings);
    rep.total_bytes_before = total();
    rep.over_budget = rep.total_bytes_before > static_cast<std::uint64_t>(rep.max_bytes);
    const auto target = static_cast<std::uint64_t>(rep.high_water_bytes);
    if (rep.over_budget) {
      // Phase A: prompt blobs (none in sessionrt). Phase B: removable files, oldest mtime first
      // (ties by name as listed), until the target is met.
      for (const auto& indexed : index_.by_mtime()) {
        if (total() <= target) break;
        if (!counted(indexed)) continue;
        if (const file_state* seen = touched(indexed.name)) {
          if (!seen->alive || !budget_removable_file(seen->kind.kind, seen->kind.session_id, seen->mtime_ms)) continue;
        } else if (!budget_removable_file(indexed.kind, indexed.session_id(), indexed.mtime_ms)) {
          continue;
        }
        const std::size_t fi = touch(indexed);
        ++rep.removed_files;
        rep.freed_bytes += files_[fi].size;
        file_action(fi, maintenance_step::budget_files, action_kind::delete_file);
      }
      // Phase C: rows the cap archived; their files deleted outright when unreferenced.
      if (total() > target) {
        for (std::size_t i : cap_archived_oldest_first()) {
          if (total() <= target) break;
          const std::uint64_t before = total();
          const std::size_t files_before = plan_.deleted_files;
          remove_row(i, maintenance_step::budget_rows);
          flush_files(maintenance_step::budget_rows, true);
          ++rep.removed_entries;
          rep.removed_files += plan_.deleted_files - files_before;
          rep.freed_bytes += before - total();
        }
      }
    }
    rep.total_bytes_after = total();
    rep.met = !rep.over_budget || rep.total_bytes_after <= target;
    if (!rep.met) {
      const std::size_t held = live_rows_;
      plan_.warnings.push_back(fmt::format(
          "session disk budget cannot be met: {} bytes remain above the high-water target of {} bytes (maxDiskBytes {}) "
          "after every removable file and row; the {} remaining rows (unarchived rows, rows archived other than by the cap, "
          "protected group/channel/thread/topic rows, the active session and preserved keys) and their transcripts and the "
          "files maintenance never removes hold them; "
          "raise session.maintenance.maxDiskBytes or remove rows by hand",
          rep.total_bytes_after, rep.high_water_bytes, rep.max_bytes, held));
    }
    plan_.disk_budget = rep;
  }

  const planner_input& in_;
  const std::vector<maintenance_row>& rows_;
  maintenance_plan plan_;
  std::vector<bool> removed_;
  std::vector<bool> keep_always_;
  std::vector<bool> kept_unprotected_;  // kept for a reason other than protection
  std::vector<std::uint64_t> archived_bytes_;  // what archiving a row added to its text (0: not archived here)
  std::vector<bool> archived_;                 // archivedAt set, before or by this plan
  std::vector<std::int64_t> archived_at_;
  std::vector<bool> cap_archived_;             // archiveReason "active-session-cap"
  std::size_t unarchived_ = 0;                 // rows in the store without archivedAt
  std::size_t live_rows_ = 0;
  std::uint64_t store_text_sum_ = 0;
  std::uint64_t files_bytes_ = 0;
  std::unordered_map<std::string_view, int> refs_;  // session id -> rows naming it (views into rows_)
  std::vector<std::string> orphaned_;          // session ids whose last row was just removed
  const dir_index& index_;
  std::vector<file_state> files_;                           // the files the plan touched
  std::unordered_map<std::string, std::size_t> touched_;  // listed name -> its place in files_
  std::unordered_set<std::string> made_names_;              // archive names this plan gives

};

}  // namespace

maintenance_plan plan_maintenance(const planner_input& input) {
  static const std::vector<maintenance_row> no_rows;
  planner_input in = input;
  if (!in.rows) in.rows = &no_rows;
  if (in.index) return planner(in, *in.index).run();
  const dir_index index = in.files ? dir_index::of(*in.files) : dir_index();  // copies the listing
  return planner(in, index).run();
}

}  // namespace sessionrt::actors
