// cold_storage_planner: session.maintenance.coldStorage {enabled, afterDays} for one sessions dir
// (OpenClaw 2026.9 moves the transcripts of inactive sessions into compressed archives and
// restores them when the session is used again; here <file>.jsonl becomes <file>.jsonl.zst,
// cold_transcript.hpp). Pure: rows, the dir's index, the settings and `now` in, a plan out.
// A transcript is planned for compression (action compress_file, step cold_storage) when
//   - a row names it (maintenance_row::transcript_name) and it is in the dir uncompressed;
//   - that row is the only one referencing its session (a session several rows share, or a
//     sessionFile naming another session's file, stays as it is);
//   - the row is not running, not a preserved key, and its activity (lastInteractionAt,
//     lastActivityAt, sessionStartedAt, updatedAt: activity_at) is older than the cutoff
//     (now - afterDays days); OpenClaw protects the same rows;
//   - the file was not written since the cutoff either (its mtime).
// Oldest mtime first (ties by name), at most max_files files and max_bytes of transcript per
// plan, but always one file at least (a larger transcript is compressed alone), as OpenClaw's
// MAX_TRANSCRIPTS_PER_PASS (128) and MAX_BATCH_BYTES (64 MiB) bound its worker.
// Also planned (delete_file, step cold_storage): a leftover .zst beside its .jsonl (a crash in
// the middle of a move; the .jsonl is the transcript), and the temp files of a compression or
// restore (<transcript>[.zst].<pid>.<uuid>.tmp) older than an hour. The temp scan walks the
// index once; the rest costs what the rows are.
// The action's key and updated_at are the row's: the applier holds the key, reads the row back
// and compresses only when the row still names the session and was not updated since; size and
// mtime are the file's, compared again before it is compressed (compress_options::expect_*).
// Cold storage runs whatever session.maintenance.mode is (it has its own switch, as OpenClaw's).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "actors/maintenance/dir_index.hpp"
#include "actors/maintenance/maintenance_planner.hpp"

namespace sessionrt::actors {

struct cold_storage_input {
  const std::vector<maintenance_row>* rows = nullptr;  // required
  const dir_index* index = nullptr;                    // required
  maintenance_settings settings;
  std::int64_t now_ms = 0;
  std::vector<std::string> preserve_keys;
  std::size_t max_files = 128;
  std::uint64_t max_bytes = 64ull << 20;
  std::int64_t stale_temp_ms = 60 * 60 * 1000;
};

// Empty when cold storage is disabled.
maintenance_plan plan_cold_storage(const cold_storage_input& input);

}  // namespace sessionrt::actors
