// compaction_runner: one compaction of a session's transcript (SPEC §4, [R§6.3–6.5]).
//   plan  — plan_compaction on the path from the last kept boundary to the leaf;
//   summarize — the configured provider first (compaction.provider); an empty answer or an
//           error falls back to the built-in summarizer (the model runner, purpose
//           compaction_summary, the prompts of [R§6.4]; in stages when the conversation does
//           not fit one call, staged_summary.hpp) with a warning; errc::cancelled from
//           the provider is propagated, not swallowed;
//   persist — a compaction entry (summary, firstKeptEntryId, tokensBefore, details) appended at
//           the leaf; the row's compactionCount + 1 and totalTokens = the new context's estimate;
//   rotate — with compaction.truncateAfterCompaction, the session continues in a successor
//           transcript "<ISO>_<uuid>.jsonl" (new sessionId, parentSession = the old file) that
//           holds the kept entries and the compaction; the old file stays as a checkpoint.
// CAF-free: the session core awaits it (a coroutine: the summary calls go through turn_io and
// the session goes on handling other messages meanwhile) and turns the result into events.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "messages/ids.hpp"
#include "actors/runtime_settings.hpp"
#include "actors/session/session_model.hpp"
#include "actors/session/compaction_providers.hpp"
#include "actors/session/turn_io.hpp"
#include "actors/session/turn_task.hpp"
#include "messages/clock.hpp"
#include "messages/model_runner.hpp"
#include "messages/session_entry.hpp"
#include "storage/transcript_file.hpp"

namespace sessionrt::actors {

struct compaction_request {
  std::string reason;         // manual | threshold | overflow | preflight | transcript_bytes
  std::string instructions;   // /compact <instructions>
  std::string session_key;
};

struct compaction_outcome {
  bool compacted = false;        // false: nothing to compact (empty path, or ends in a compaction)
  std::string provider;          // provider id, or "builtin"
  std::string fallback_warning;  // why the provider was not used, when it was configured
  std::int64_t tokens_before = 0;
  std::int64_t tokens_after = 0;
  std::string first_kept_entry_id;
  std::optional<std::string> successor_session_id;  // truncateAfterCompaction
  std::optional<std::string> successor_path;
  // The compacted transcript's context (what tokens_after counts), so the caller need not
  // build it again. Without a successor it is the session's next context; a successor's
  // differs (its kept entries lose their signatures) and must be read from the successor.
  boost::json::array context;
};

struct compaction_env {
  storage::fs* files = nullptr;
  clock* time = nullptr;
  const runtime_settings* settings = nullptr;
  turn_io* io = nullptr;  // the summary calls; must outlive the compaction
  const compaction_providers* providers = nullptr;
  session_ids ids;  // the successor transcript's session id
  session_model model;  // the session's model (window, reserve); summaries go to it
};

// Compacts `transcript` (the session's open writer) and updates `row`. On success with
// rotation, `transcript` is replaced by the successor's writer. Errors leave the transcript
// as it was (nothing appended) and the row unchanged. The caller keeps env, transcript and row
// alive, and the transcript untouched by anyone else, until the task ends.
task<result<compaction_outcome>> compact_session(compaction_env env, compaction_request req,
                                                 std::unique_ptr<storage::transcript_file>& transcript,
                                                 session_entry& row);

}  // namespace sessionrt::actors
