// memory_flush_planner: the pre-compaction memory flush rules [R§7.1–7.2], SPEC §4.
// Pure functions: no CAF, no I/O, no clock; time comes in as `now_ms` (epoch milliseconds).
// - build_flush_plan() gives the flush turn's texts for a moment and an IANA time zone; the
//   only error is an unknown zone (errc::invalid_argument naming it).
// - decide_flush() answers "run the flush before this reply?" from the session row and what
//   the caller measured; it never changes the row. The caller reads the transcript only when
//   the decision says so (read_transcript) and then asks again with the transcript's numbers.
// - apply_flush_success / apply_flush_failure / clear_flush_fields patch the row the way
//   OpenClaw's `{...entry, ...patch}` does: existing keys keep their place, new keys are
//   appended, cleared keys are deleted (JavaScript `undefined` is not written to JSON).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/session_entry.hpp"
#include "messages/status.hpp"

namespace sessionrt::actors {

// agents.defaults.compaction.memoryFlush.* [R§7.1]. The flush's threshold also takes
// compaction.reserveTokensFloor, which the caller passes in (one setting, compaction's).
struct memory_flush_settings {
  bool enabled = true;
  std::int64_t soft_threshold_tokens = 4000;
  std::int64_t force_flush_transcript_bytes = 2 * 1024 * 1024;  // 0 disables the byte trigger
  std::string prompt;         // empty (after trimming): the default prompt
  std::string system_prompt;  // empty (after trimming): the default system prompt
  std::string model;          // exact "provider/model" for the flush turn; empty: session's
};

// What the flush turn sends. `prompt` ends with the time block (see build_flush_plan).
struct flush_plan {
  std::string prompt;
  std::string system_prompt;
  std::string date_stamp;     // YYYY-MM-DD in the given zone
  std::string relative_path;  // "memory/<date_stamp>.md", relative to the workspace
  std::string model;          // settings.model trimmed; empty: no override
};

// The default texts, verbatim from [R§7.1] (sentences joined by single spaces).
extern const std::string_view default_flush_prompt;
extern const std::string_view default_flush_system_prompt;

// Appends ("\n\n" + hint) each of the three safety hint sentences that `text` lacks, after
// trimming `text`; an empty text becomes the hints alone.
std::string ensure_safety_hints(std::string_view text);
// Appends "\n\nIf no user-visible reply is needed, start with NO_REPLY." unless `text`
// already contains "NO_REPLY".
std::string ensure_no_reply_hint(std::string_view text);

// The time block appended to the prompt (OpenClaw's cron-style line, 24-hour clock):
//   "Current time: Tuesday, December 1st, 2026 - 00:30 (Asia/Tokyo)\n"
//   "Reference UTC: 2026-11-30 15:30 UTC"
// An empty zone means "UTC". Errors: unknown zone.
result<std::string> format_current_time_block(std::int64_t now_ms, std::string_view time_zone);

// prompt = ensure_no_reply_hint(ensure_safety_hints(custom or default)) with every
// "YYYY-MM-DD" replaced by the date in `time_zone`, then "\n" + the time block (skipped when
// the text already says "Current time:"). system_prompt likewise, without the time block.
// Builds the texts whether or not settings.enabled is set; decide_flush() checks that.
result<flush_plan> build_flush_plan(const memory_flush_settings& settings, std::int64_t now_ms,
                                    std::string_view time_zone);

inline constexpr std::int64_t default_context_window_tokens = 200000;
// Within this many tokens of the threshold, fresh persisted tokens are not trusted alone:
// the transcript's last output tokens could tip the decision [R§6.2, R§7.2].
inline constexpr std::int64_t transcript_read_margin_tokens = 8192;

// contextWindow - reserveTokensFloor - softThresholdTokens, never below 0 (200000 -> 176000).
// A window <= 0 means unknown and counts as 200000.
std::int64_t flush_threshold(std::int64_t context_window, std::int64_t reserve_tokens_floor,
                             const memory_flush_settings& settings);

// What the caller knows before the reply run. The transcript_* values come from reading
// the transcript (its last usage) and stay unset / 0 until it has been read.
struct flush_inputs {
  std::int64_t context_window = 0;   // model's context tokens; <= 0: unknown (200000)
  std::int64_t reserve_tokens_floor = 20000;  // compaction.reserveTokensFloor
  std::int64_t prompt_estimate = 0;  // ceil(chars/4) of the incoming prompt
  std::optional<std::int64_t> transcript_prompt_tokens;  // prompt side of the last call
  std::int64_t last_output_tokens = 0;  // output tokens of the last call
  std::int64_t transcript_bytes = 0;    // size of the active transcript file (a stat suffices)
  bool is_heartbeat = false;
  bool workspace_writable = true;  // false: sandboxed workspace that is not "rw"
};

enum class flush_reason {
  threshold_crossed,     // run: tokenCount >= threshold
  transcript_too_large,  // run: transcript_bytes >= force_flush_transcript_bytes
  disabled,              // skip: settings.enabled is false
  heartbeat,             // skip: heartbeat run
  read_only_workspace,   // skip: a flush is due but could not write memory/<date>.md
  context_over_window,   // skip: a flush is due but the transcript's prompt tokens + the prompt
                         // estimate no longer fit the window: compaction goes first
  already_flushed,       // skip: memoryFlushCompactionCount == (compactionCount ?? 0)
  below_threshold,       // skip: neither trigger holds
};
const char* flush_reason_name(flush_reason reason) noexcept;

struct flush_decision {
  bool run = false;
  flush_reason reason = flush_reason::below_threshold;
  // max(fresh persisted totalTokens, transcript prompt tokens) + last output + prompt
  // estimate; 0 when neither token source is known (then only the byte trigger can fire).
  std::int64_t token_count = 0;
  std::int64_t threshold = 0;
  // Read the transcript's usage before trusting this decision: there are no fresh persisted
  // tokens, or persisted + prompt estimate is within 8192 of the threshold.
  bool read_transcript = false;
  // A trigger holds and this cycle was not flushed yet: true when the flush runs, and when it
  // is skipped for read_only_workspace or context_over_window (the skips worth reporting).
  bool due = false;
};

// The trigger of [R§7.2]: persisted totalTokens count only when totalTokensFresh === true.
// Disabled and heartbeat runs are skipped before anything is counted; a read-only workspace or
// a context past the window skip a flush that is due (the reasons a caller reports), so their
// decisions carry token_count and threshold.
flush_decision decide_flush(const session_entry& entry, const flush_inputs& inputs,
                            const memory_flush_settings& settings);

// After the transcript was read: when its prompt tokens are larger than the fresh persisted
// total (or the persisted one is stale or missing), sets totalTokens to them and
// totalTokensFresh = true. Returns whether the row changed (and so needs saving).
bool adopt_transcript_prompt_tokens(session_entry& entry,
                                    std::optional<std::int64_t> transcript_prompt_tokens);

inline constexpr std::int64_t max_flush_failures = 3;
inline constexpr std::size_t max_flush_error_chars = 200;  // UTF-16 code units, as in JS
inline constexpr std::string_view flush_gave_up_notice =
    "⚠️ Memory flush failed after 3 attempts; skipping for this cycle. It will retry after the "
    "next compaction.";

// A flush turn finished: memoryFlushAt = now, memoryFlushCompactionCount = the count read
// before the flush, memoryFlushFailureCount = 0, the last-failure fields deleted.
void apply_flush_success(session_entry& entry, std::int64_t now_ms,
                         std::int64_t compaction_count_before_flush);

// A flush turn failed (not aborted): memoryFlushFailureCount + 1, memoryFlushLastFailedAt =
// now, memoryFlushLastFailureError = `error` (over 200 UTF-16 units: the first 199 and "…").
// When the count reaches 3 the cycle is marked flushed (memoryFlushAt = now,
// memoryFlushCompactionCount = compactionCount ?? 0) and the notice for the user is returned.
// As in OpenClaw the count is not reset then; only a success or a new session resets it.
std::optional<std::string> apply_flush_failure(session_entry& entry, std::int64_t now_ms,
                                               std::string_view error);

// A new session: deletes every "memoryFlush*" key of the row.
void clear_flush_fields(session_entry& entry);

}  // namespace sessionrt::actors
