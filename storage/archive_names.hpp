// archive_names: every file name that lives in a sessions dir, built and recognized in one place
// ([R§2.4] store temps, [R§3.1] transcript names, [R§3.5] corrupt backups, [R§4.3] archives,
// [R§5.4] disk-budget artifacts, [R§8.1] repair backups, [R§9] write locks).
// - classify(name) is the recognizer: it takes a base name (no '/'), never touches the disk, and
//   returns kind unknown for anything it does not recognize exactly (a reset archive whose
//   timestamp is not `YYYY-MM-DDTHH-MM-SS[.mmm]Z` is unknown, not an archive);
// - the builders append to a file name or a path alike (the suffix is the same);
// - archive_transcript renames (never copies) a transcript to its archive name and never
//   replaces an existing file: when the name is taken it moves the timestamp on by 1 ms.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

enum class artifact_kind {
  unknown,
  store,                  // sessions.json
  store_quarantine,       // sessions.json.corrupt-<archive ts>  (SPEC §1.1 Decision)
  store_legacy_backup,    // sessions.json.bak.<N>
  store_temp,             // sessions.json.<pid>.<uuid>.tmp | sessions.json.<uuid>.tmp
  temp,                   // <prefix>.<pid>.<uuid>.tmp (repair / other atomic-replace temps)
  primary_transcript,     // <sessionId>.jsonl
  topic_transcript,       // <sessionId>-topic-<encodeURIComponent(topic)>.jsonl
  successor_transcript,   // <ISO with [:.]->'-'>_<sessionId>.jsonl
  checkpoint_transcript,  // <sessionId>.checkpoint.<uuid>.jsonl
  cold_transcript,        // <transcript>.jsonl.zst: a transcript kept compressed (cold_transcript.hpp)
  trajectory,             // <sessionId>.trajectory.jsonl
  trajectory_pointer,     // <sessionId>.trajectory-path.json
  reset_archive,          // <file>.reset.<archive ts>
  deleted_archive,        // <file>.deleted.<archive ts>
  legacy_bak_archive,     // <file>.bak.<archive ts>
  repair_backup,          // <file>.bak-<pid>-<epoch ms>
  corrupt_backup,         // <file>.corrupt-<ISO with [:.]->'-'>-<8 hex>.jsonl
  dropped_lines,          // <file>.dropped-<ISO with [:.]->'-'>.jsonl: what a repair removed
  write_lock,             // <file>.jsonl.lock
};

const char* artifact_kind_name(artifact_kind kind) noexcept;

struct artifact_name {
  artifact_kind kind = artifact_kind::unknown;
  // The file this one belongs to: the archived / backed-up / locked file name for archives,
  // backups and locks; "<sessionId>.jsonl" for checkpoints and trajectory sidecars;
  // "sessions.json" for store artifacts; the name itself for transcripts and the store;
  // the prefix for temps.
  std::string base;
  // Transcript kinds and trajectory sidecars: the session id the name carries.
  std::string session_id;
  // "reset" / "deleted" / "bak" for the timestamped archives.
  std::string reason;
  // Archives, quarantines, corrupt and repair backups, successor transcripts.
  std::optional<std::int64_t> timestamp_ms;
  // Kind-specific: encoded topic (topic), uuid (checkpoint, temps), 8 hex (corrupt backup),
  // N (store legacy backup), pid (repair backup, temps with a pid).
  std::string detail;
};

artifact_name classify(std::string_view name);

bool is_transcript_kind(artifact_kind kind) noexcept;  // primary, topic, successor, checkpoint
// A transcript in either form: is_transcript_kind, or one kept compressed (cold_transcript).
bool holds_transcript(artifact_kind kind) noexcept;
// The timestamped archives disk budget Phase B may delete ([R§5.4]): reset, deleted, .bak.<ts>,
// sessions.json.bak.N, and (ours) the lines a repair removed.
bool is_archive_kind(artifact_kind kind) noexcept;

// Store temps older than this are stale and may be deleted ([R§2.4] SESSION_STORE_TEMP_STALE_MS).
inline constexpr std::int64_t store_temp_stale_ms = 5 * 60 * 1000;
bool is_stale_store_temp(const artifact_name& name, std::int64_t mtime_ms, std::int64_t now_ms) noexcept;
bool is_stale_store_temp(artifact_kind kind, std::int64_t mtime_ms, std::int64_t now_ms) noexcept;

// JavaScript toISOString() with ':' and '.' replaced by '-' ("2026-11-30T01-31-20-053Z"), the
// timestamp of successor transcripts and corrupt backups; and its strict recognizer.
std::string format_dashed_iso_ts(std::int64_t epoch_ms);
std::optional<std::int64_t> parse_dashed_iso_ts(std::string_view text);

enum class archive_reason { reset, deleted };
const char* archive_reason_name(archive_reason reason) noexcept;

std::string archive_name(std::string_view file, archive_reason reason, std::int64_t now_ms);
std::string legacy_bak_archive_name(std::string_view file, std::int64_t now_ms);
std::string repair_backup_name(std::string_view file, std::int64_t pid, std::int64_t now_ms);
// hex8: 8 lowercase hex chars (the caller's random part); not checked here.
std::string corrupt_backup_name(std::string_view file, std::int64_t now_ms, std::string_view hex8);
std::string dropped_lines_name(std::string_view file, std::int64_t now_ms);
std::string store_quarantine_name(std::string_view store_file, std::int64_t now_ms);
std::string store_legacy_backup_name(std::string_view store_file, unsigned n);
// With pid: "sessions.json.<pid>.<uuid>.tmp" (2026.5+); without: "sessions.json.<uuid>.tmp".
std::string store_temp_name(std::string_view store_file, std::optional<std::int64_t> pid, std::string_view uuid);
std::string checkpoint_transcript_name(std::string_view session_id, std::string_view uuid);
std::string trajectory_name(std::string_view session_id);
std::string trajectory_pointer_name(std::string_view session_id);
std::string write_lock_name(std::string_view file);  // "<file>.lock"

// Renames `path` to archive_name(path, reason, now) (or 1 ms later while that name is taken)
// and returns the new path. A transcript kept compressed (only "<path>.zst" exists) is archived
// as it is ("<path>.zst.<reason>.<ts>"); when both exist the .zst is a leftover copy of the
// .jsonl (cold_transcript.hpp) and is removed after the .jsonl is archived. The file is
// fdatasync'd before the rename (the commit log's records name it by path). Errors: not_found
// when neither exists, io errors from fdatasync or rename; the message names both paths.
result<std::string> archive_transcript(fs& files, clock& time, const std::string& path, archive_reason reason);

}  // namespace sessionrt::storage
