// cron_retention: the cron run log trimming and the run-row reaper [R§5.6], as pure functions,
// with their offline appliers (the CLI and tests; the runtime wires the pure parts into its
// actors).
// - trim_run_log: the run log `runs/<jobId>.jsonl` holds one JSON line per run. When the text
//   is over cron.runLog.maxBytes, the last cron.runLog.keepLines non-empty lines are kept
//   (each ending "\n"); nullopt when no trim is due. Lines are not parsed.
// - plan_cron_reaper: with cron.sessionRetention set, every run row (…:cron:<job>:run:<id>,
//   actors::is_cron_run_key) with updatedAt < now - retention is removed, unless preserved
//   (running jobs); base `cron:<job>` rows are kept; the transcripts of removed rows that no
//   remaining row references are archived as `.deleted.<ts>` (sidecars deleted), and
//   `.deleted.<ts>` archives older than the retention are deleted. The plan has the shape and
//   the application contract of maintenance_planner.hpp (step cron_reaper); `mode` is the
//   caller's (the reaper has no warn mode of its own: pass enforce to apply it).
// - trim_run_log_file: reads `path` (at most 64 MiB) and, when a trim is due, replaces it
//   atomically (0600). Returns whether it trimmed; a missing file is false.
// - append_run_log: appends one line (a "\n" is added) to `path`, creating it (0600) and its
//   directory (0700), then trims it as trim_run_log_file does. Returns whether it trimmed.
//   The caller serializes appends to one file (one job's runs come from one session actor).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"
#include "actors/maintenance/maintenance_settings.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

std::optional<std::string> trim_run_log(std::string_view text, const cron_settings& settings);

maintenance_plan plan_cron_reaper(const std::vector<maintenance_row>& rows, const std::vector<dir_file>& files,
                                  const cron_settings& settings, std::int64_t now_ms,
                                  const std::vector<std::string>& preserve_keys = {},
                                  maintenance_mode mode = maintenance_mode::enforce);
// The same over a kept index of the dir: costs the rows plus what it finds.
maintenance_plan plan_cron_reaper(const std::vector<maintenance_row>& rows, const dir_index& files,
                                  const cron_settings& settings, std::int64_t now_ms,
                                  const std::vector<std::string>& preserve_keys = {},
                                  maintenance_mode mode = maintenance_mode::enforce);

inline constexpr std::size_t max_run_log_read_bytes = 64u << 20;
result<bool> trim_run_log_file(storage::fs& files, const std::string& path, const cron_settings& settings);

result<bool> append_run_log(storage::fs& files, const std::string& path, std::string_view line,
                            const cron_settings& settings);

// "<cronStoreDir>/runs/<jobId>.jsonl"; unsafe_path for a job id with '/', '\\', NUL or "..".
result<std::string> run_log_path(std::string_view cron_store_dir, std::string_view job_id);

}  // namespace sessionrt::actors
