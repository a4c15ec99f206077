// maintenance_settings: the `session.maintenance` keys and the `cron` retention keys as typed
// values with the SPEC's defaults (SPEC §6.2, [R§5.1, §5.6]), and the derived figures the
// planner uses (the entry high-water mark, the effective archive retention and byte high
// water). Pure values; runtime/config.cpp reads them from the config file.
// - mode: warn (the SPEC's Decision: report, change nothing) | enforce;
// - resetArchiveRetention: unset means "= pruneAfter"; `false` disables the removal of
//   `.reset.<ts>` archives;
// - highWaterBytes: unset means floor(0.8 * maxDiskBytes) (at least 1), and it is clamped to
//   maxDiskBytes; it means nothing without maxDiskBytes.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace sessionrt::actors {

enum class maintenance_mode { warn, enforce };
std::optional<maintenance_mode> parse_maintenance_mode(std::string_view text);  // "warn" | "enforce"
const char* maintenance_mode_name(maintenance_mode mode) noexcept;

inline constexpr std::int64_t day_ms = 24LL * 3600 * 1000;

struct maintenance_settings {
  maintenance_mode mode = maintenance_mode::warn;      // session.maintenance.mode
  std::int64_t prune_after_ms = 30 * day_ms;           // session.maintenance.pruneAfter
  std::int64_t max_entries = 500;                      // session.maintenance.maxEntries
  std::optional<std::int64_t> reset_archive_retention_ms;  // ...resetArchiveRetention (unset: = pruneAfter)
  bool reset_archive_retention_disabled = false;           // ...resetArchiveRetention: false
  std::optional<std::int64_t> max_disk_bytes;          // session.maintenance.maxDiskBytes (unset: no budget)
  std::optional<std::int64_t> high_water_bytes;        // session.maintenance.highWaterBytes (unset: 80%)
  // OpenClaw 2026.9 (store-maintenance.ts):
  // preserveRecent: interactive rows active within this long (activity = the latest of
  // lastInteractionAt, lastActivityAt, sessionStartedAt, updatedAt) are never removed by the
  // age, model-run, count or disk-budget steps; synthetic rows stay eligible. Unset/false: none.
  std::optional<std::int64_t> preserve_recent_ms;
  // archiveDashboardAfter: `agent:<id>:dashboard:...` rows inactive this long are archived in
  // place (archivedAt = now, archiveReason "stale-dashboard"; dashboard_archive.hpp), in mode
  // enforce; nullopt (false or 0) = never.
  std::optional<std::int64_t> archive_dashboard_after_ms = 7 * day_ms;
  // coldStorage {enabled, afterDays}: the transcripts of rows inactive (and not written) for
  // afterDays days are kept compressed as <file>.jsonl.zst (cold_storage_planner.hpp); runs
  // whatever the mode, as OpenClaw's has its own switch. Off by default.
  bool cold_storage_enabled = false;
  std::int64_t cold_storage_after_days = 30;
  // Not a config key: the unarchived row count at which a pass's cap step runs (unset: the
  // [R§2.5] high water of max_entries, entry_high_water). A cluster shard's bounds set it
  // (shard_bounds.hpp), as the agent's census, not the shard's rows, decides whether it runs.
  std::optional<std::int64_t> cap_high_water_rows;
};

// [R§2.5] highWater(max): max <= 0 -> 1; max <= 49 -> max + 1; else max + max(25, ceil(max / 10)).
std::int64_t entry_high_water(std::int64_t max_entries) noexcept;
// cap_high_water_rows when set, else entry_high_water(max_entries).
std::int64_t cap_high_water(const maintenance_settings& s) noexcept;
// nullopt when `.reset.` archives are never removed.
std::optional<std::int64_t> reset_archive_retention(const maintenance_settings& s) noexcept;
// nullopt without maxDiskBytes; else highWaterBytes (or floor(0.8 * max), at least 1) clamped
// to maxDiskBytes.
std::optional<std::int64_t> high_water_bytes(const maintenance_settings& s) noexcept;

// One shard's even share of an agent's bounds (maxEntries, maxDiskBytes and highWaterBytes
// divided by `shards`, rounded up, at least 1; a maxEntries of 0 or less stays as it is;
// `shards` of 1 or less: `s` as it is). Only a hint now: a shard's store asks for a pass when
// its rows reach the high water of this share (runtime_start.cpp); what the pass removes is
// decided against the whole agent (shard_bounds.hpp), never against this share.
maintenance_settings shard_share(const maintenance_settings& s, int shards) noexcept;

// The `cron` keys [R§5.6].
struct cron_settings {
  // cron.sessionRetention: run rows older than this are reaped; nullopt = `false` (never).
  std::optional<std::int64_t> session_retention_ms = day_ms;
  std::int64_t run_log_max_bytes = 2000000;  // cron.runLog.maxBytes
  std::int64_t run_log_keep_lines = 2000;    // cron.runLog.keepLines
};

// Model-run probe rows (agent:<id>:explicit:model-run-<uuid>) live this long [R§5.3 step 1].
inline constexpr std::int64_t model_run_retention_ms = day_ms;

}  // namespace sessionrt::actors
