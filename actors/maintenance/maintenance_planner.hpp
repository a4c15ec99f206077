// maintenance_planner: what store maintenance would do to one sessions dir (SPEC §6.2,
// [R§5.2-5.5]). Pure: the rows of sessions.json (as maintenance_row values), a listing of the
// regular files directly in the sessions dir (names, sizes, mtimes), the settings, `now` and
// the active key in; the plan out. No I/O, no clock, never fails.
//
// The plan is an ordered list of actions, in the order of [R§5.3] (cleanup's preview order
// [R§5.5] for the steps only `sessions cleanup` runs):
//   fix_missing, fix_dm_scope (cleanup flags only), model_run (forced or unarchived count >=
//   high water), archive_dashboards (session.maintenance.archiveDashboardAfter: stale dashboard
//   rows archived in place, dashboard_archive.hpp), stale (updatedAt < now - pruneAfter),
//   cap (forced: unarchived count > maxEntries; else unarchived count >= highWater(maxEntries):
//   the oldest by activity_at of the rows that may change, as many as the unarchived count
//   passes maxEntries), unreferenced (the transcripts of removed
//   rows no remaining row references are archived as `.deleted.<ts>`, their trajectory
//   sidecars deleted; forced: also orphan transcripts older than pruneAfter, and stale store
//   temps deleted), archive_retention (`.deleted.<ts>` older than pruneAfter and `.reset.<ts>`
//   older than resetArchiveRetention, by the timestamp in the name, deleted), budget_files and
//   budget_rows (disk budget phases B and C down to highWaterBytes when the total passes
//   maxDiskBytes [R§5.4]; phase A deletes prompt blobs, which sessionrt does not write).
// Archive in place, not delete (OpenClaw 2026.9, store-maintenance.ts): the stale and cap steps
// remove only synthetic rows (cron, hook, heartbeat, node, ACP, sub-agent, model-run); every
// other row they take stays, archived (archivedAt = now, archivedBy dropped, archiveReason
// "age-retention" / "active-session-cap"), keeping its transcript. An archived row (archivedAt
// set, by maintenance or by hand) is exempt from every step but one: phase C of the disk budget
// evicts only rows archived with reason "active-session-cap" (oldest archivedAt first, ties by
// key), with their unreferenced files deleted. The cap counts only unarchived rows.
// Never changed, by any step: rows active within session.maintenance.preserveRecent (not
// synthetic ones; activity_at), protected rows (group / channel / thread / topic pointers,
// actors::is_protected_key), pinned rows, rows with modelSelectionLocked or status "running",
// the active key and the preserve keys; never moved: a file whose session id a remaining row
// references. Synthetic rows are never protected. Rows without updatedAt are never age-pruned;
// the cap takes them first.
//
// Transcripts kept compressed (<file>.jsonl.zst, cold_transcript.hpp) are transcripts to every
// step: a row whose transcript is compressed is not missing, and an unreferenced one is
// archived as it is. Compressing them is not this plan's (cold_storage_planner.hpp).
//
// Applying a plan (the maintenance actor, or plan_applier for offline use): actions in order,
// in batches of any size. Within a batch, write the row removals to the store first (one
// save), then do its file actions: every file action comes after the removal of each row that
// referenced its session, so a crash between leaves an unreferenced file (which the next
// plan picks up), never a row without its transcript. Each action says what it expected
// (a row's updatedAt, a file's size and mtime) so an applier can skip what changed since the
// plan was made; a live session must be passivated before a file of `session_id` moves.
// mode warn: the plan says what enforce would do; nothing applies it.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "actors/maintenance/dir_index.hpp"
#include "actors/maintenance/maintenance_settings.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::actors {

// One row of sessions.json as the planner sees it. Its strings are packed in one buffer: the
// maintenance actor may keep one for every row of a large store (row_cache).
class maintenance_row {
 public:
  maintenance_row() = default;
  // `session_file`: the base name of sessionFile when it is in the sessions dir, else "".
  maintenance_row(std::string_view key, std::string_view session_id, std::string_view session_file,
                  std::string_view label, std::string_view model);

  std::string_view key() const { return part(0); }
  std::string_view session_id() const { return part(1); }  // "" when the row has none
  // The transcript the row names in the dir: its sessionFile's name when that is in the dir,
  // else <sessionId>.jsonl ("" without either).
  std::string transcript_name() const;
  // The session id the sessionFile's name carries when it is not the row's own ("" if none).
  std::string_view other_file_session_id() const { return part(3); }
  std::string_view label() const { return part(4); }  // "" = unlabeled
  std::string_view model() const { return part(5); }  // modelOverride ?? model ("" = none)

  std::optional<std::int64_t> updated_at;
  // The latest of lastInteractionAt, lastActivityAt, sessionStartedAt, updatedAt (OpenClaw's
  // getSessionMaintenanceActivityAt; 0 without any): preserveRecent measures from it.
  std::int64_t activity_at = 0;
  std::uint64_t text_bytes = 0;  // its bytes in sessions.json (session_store::append_row_text)
  bool is_protected = false;     // is_protected_key(key, row)
  bool synthetic = false;        // is_synthetic_key(key)
  // OpenClaw 2026.9's flags its archive and preservation rules look at (dashboard_archive.hpp):
  bool archived = false;      // archivedAt set
  std::int64_t archived_at = 0;  // archivedAt when a number (phase C's order)
  bool cap_archived = false;     // archived with archiveReason "active-session-cap"
  bool pinned = false;        // pinnedAt set on a pinnable row
  bool model_locked = false;  // modelSelectionLocked: true
  bool running = false;       // status "running"

 private:
  std::string_view part(std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1];
    const std::size_t end = i < ends_.size() ? ends_[i] : text_.size();
    return std::string_view(text_).substr(begin, end - begin);
  }
  // key, session id, sessionFile's name (only when it is not <session id>.jsonl), the session
  // id that name carries (only when not the row's), label, model; ends_[i]: where part i ends.
  std::string text_;
  std::array<std::uint32_t, 5> ends_{};
};
// Every row of `store`, in store order. `sessions_dir` (may be "") decides which sessionFile
// values are in the dir: an absolute path elsewhere gives session_file "".
std::vector<maintenance_row> maintenance_rows(const storage::session_store& store, std::string_view sessions_dir = {});
maintenance_row maintenance_row_of(std::string_view key, const session_entry& entry, std::string_view sessions_dir = {});

enum class maintenance_step {
  fix_missing,
  fix_dm_scope,
  model_run,
  stale,
  cap,
  unreferenced,
  archive_retention,
  budget_files,  // phase B (and A)
  budget_rows,   // phase C
  cron_reaper,   // cron_retention.hpp
  archive_dashboards,  // archiveDashboardAfter (dashboard_archive.hpp)
  cold_storage,        // coldStorage (cold_storage_planner.hpp)
};
const char* maintenance_step_name(maintenance_step step) noexcept;
// The per-row label of [R§5.5] for a row removed by `step`: prune-missing, retire-dm-scope,
// prune-model-run, prune-stale, cap-overflow, evict-budget; "reap-cron-run" for the reaper.
const char* row_action_label(maintenance_step step) noexcept;
// The label of a row archived in place by `step` (OpenClaw's cleanup-action.ts):
// archive-dashboard, archive-age (stale), archive-cap (cap).
const char* row_archive_label(maintenance_step step) noexcept;
// The archiveReason a row archived in place by `step` gets: "stale-dashboard", "age-retention",
// "active-session-cap".
std::string_view row_archive_reason(maintenance_step step) noexcept;

// archive_row: the row stays, archived in place (dashboard_archive.hpp); compress_file: a
// transcript kept compressed from now on (cold_transcript.hpp).
enum class action_kind { remove_row, archive_file, delete_file, archive_row, compress_file };
const char* action_kind_name(action_kind kind) noexcept;

struct plan_action {
  maintenance_step step = maintenance_step::stale;
  action_kind kind = action_kind::remove_row;
  std::string key;                         // remove_row, archive_row: the row (compress_file: the row that holds it)
  std::optional<std::int64_t> updated_at;  // those rows' updatedAt when planned
  std::string file;                        // files: base name in the sessions dir
  std::string target;                      // archive_file: the archive's base name
  std::string session_id;                  // the session of the row / transcript ("" for others)
  std::uint64_t bytes = 0;                 // files: size; rows: text bytes
  std::int64_t mtime_ms = 0;               // files: mtime when planned
  std::int64_t at_ms = 0;                  // archive_row: the archivedAt it writes
};

struct disk_budget_report {
  std::int64_t max_bytes = 0;
  std::int64_t high_water_bytes = 0;
  std::uint64_t total_bytes_before = 0;  // after the steps before the budget
  std::uint64_t total_bytes_after = 0;
  std::size_t removed_files = 0;
  std::size_t removed_entries = 0;
  std::uint64_t freed_bytes = 0;
  bool over_budget = false;  // total_bytes_before > max_bytes
  bool met = true;           // total_bytes_after <= high_water_bytes, or not over budget
};

struct unreferenced_report {
  std::size_t scanned_files = 0;
  std::size_t removed_files = 0;  // archived or deleted by the forced unreferenced step
  std::uint64_t freed_bytes = 0;  // deleted bytes (archived files still use theirs)
  std::int64_t older_than_ms = 0;
};

struct maintenance_plan {
  maintenance_mode mode = maintenance_mode::warn;
  bool forced = false;
  std::size_t before_count = 0;
  std::size_t after_count = 0;
  std::size_t missing = 0;
  std::size_t dm_scope_retired = 0;
  std::size_t model_run_pruned = 0;
  std::size_t pruned = 0;  // stale
  std::size_t capped = 0;
  std::size_t evicted = 0;          // phase C
  std::size_t dashboards_archived = 0;  // archiveDashboardAfter: rows marked archived in place
  std::size_t age_archived = 0;         // stale rows archived in place (pruned: synthetic ones removed)
  std::size_t cap_archived = 0;         // cap rows archived in place (capped: synthetic ones removed)
  std::size_t cold_files = 0;            // coldStorage: transcripts to compress
  std::uint64_t cold_raw_bytes = 0;      // their size now
  std::size_t archived_files = 0;   // .deleted.<ts> archives made
  std::size_t deleted_files = 0;
  std::uint64_t total_bytes_before = 0;  // the dir as listed (store projected)
  std::uint64_t total_bytes_after = 0;   // after every action
  unreferenced_report unreferenced;
  std::optional<disk_budget_report> disk_budget;  // when maxDiskBytes is set
  std::vector<plan_action> actions;
  std::vector<std::string> warnings;  // one sentence each (a budget that cannot be met, ...)

  bool would_mutate() const { return !actions.empty(); }
};

struct planner_input {
  const std::vector<maintenance_row>* rows = nullptr;  // required
  // The sessions dir: `index` when the caller keeps one (a plan then costs what it finds),
  // else `files`, indexed for this plan. One of them is required (`files` may be empty).
  const std::vector<dir_file>* files = nullptr;
  const dir_index* index = nullptr;
  maintenance_settings settings;
  std::int64_t now_ms = 0;
  std::string active_key;                  // never removed ("" = none)
  std::vector<std::string> preserve_keys;  // never removed either (running cron jobs, ...)
  // `sessions cleanup`: every step runs whatever the count (the high-water mark is ignored),
  // and the unreferenced step also takes orphan transcripts and stale temps.
  bool forced = false;
  // --fix-missing: rows whose transcript is not in the listing or is named here (a file of at
  // most 4096 bytes without message records, storage-side check) are removed.
  bool fix_missing = false;
  const std::unordered_set<std::string>* empty_transcripts = nullptr;
  // --fix-dm-scope (the caller passes it only while dmScope is "main"): rows whose rest is
  // direct:<id>, <ch>:direct:<id> or <ch>:<acct>:direct:<id> are retired.
  bool fix_dm_scope = false;
  std::string store_file = "sessions.json";
};

maintenance_plan plan_maintenance(const planner_input& input);

// The row label of a key in `plan` ("keep" when no action removes or archives it; a row archived
// and later evicted has the eviction's).
const char* row_label_in(const maintenance_plan& plan, std::string_view key);
// True when `rest` of an agent key is a per-peer direct key (fix-dm-scope's rule).
bool is_per_peer_direct_key(std::string_view key);

// Exact bytes of JSON.stringify(store, null, 2) + "\n" for rows of these text sizes.
std::uint64_t projected_store_bytes(std::uint64_t sum_text_bytes, std::size_t rows, bool trailing_newline = true);

}  // namespace sessionrt::actors
