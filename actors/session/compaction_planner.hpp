// When to compact a session and what a compaction keeps [R§6.1–6.3]. Pure functions.
// - A session path is the transcript entry lines from root to leaf exactly as stored
//   ({type,id,parentId,timestamp,...}, no header line). The caller owns the objects; the
//   span must stay valid during the call. A plan copies what it needs.
// - plan_compaction follows pi-coding-agent 0.73.1 `prepareCompaction` + `findCutPoint`:
//   nothing to do for an empty path or one ending in a compaction; the cut keeps at least
//   keep_recent_tokens of messages, never lands on a toolResult (a tool call stays with its
//   result), pulls preceding non-message entries (model_change, label, ...) into the kept
//   tail, and marks a split turn when it cuts inside a turn.
// - effective_reserve follows OpenClaw `applyAgentCompactionSettingsFromConfig`: the reserve
//   is raised to the floor and capped so a small window keeps a prompt budget.
#pragma once
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sessionrt::actors {

using session_path = std::span<const boost::json::object* const>;

struct compaction_settings {
  bool enabled = true;  // automatic compaction switch; the caller checks it (no function here does)
  std::int64_t reserve_tokens = 16384;
  std::int64_t keep_recent_tokens = 20000;
  std::int64_t reserve_tokens_floor = 20000;  // 0 disables the floor
  bool truncate_after_compaction = false;
  std::optional<std::uint64_t> max_active_transcript_bytes;  // only with truncate_after_compaction
  bool mid_turn_precheck = false;  // compaction.midTurnPrecheck.enabled (midturn_precheck.hpp)
};

inline constexpr std::int64_t kDefaultContextWindow = 200000;  // when the model's window is unknown
inline constexpr std::int64_t kMinPromptBudgetTokens = 8000;
inline constexpr std::int64_t kSoftThresholdTokens = 4000;

// floor = reserve_tokens_floor; with a known window (> 0):
//   minPrompt = min(8000, max(1, floor(window/2))), maxReserve = max(0, window - minPrompt),
//   floor = min(floor, maxReserve); reserve = min(max(reserve_tokens, floor), maxReserve).
// 200k -> 20000; 16k -> 8000. A window <= 0 is unknown: max(reserve_tokens, floor).
std::int64_t effective_reserve(const compaction_settings& settings, std::int64_t context_window);

// Threshold after a successful turn: context_tokens > context_window - reserve_tokens.
// False for an unknown window (<= 0).
bool should_compact_after_turn(std::int64_t context_tokens, std::int64_t context_window, std::int64_t reserve_tokens);

// What the runtime knows before a reply run (OpenClaw `runPreflightCompactionIfNeeded`).
struct preflight_state {
  std::int64_t context_window = 0;  // <= 0: unknown, 200000 is used
  std::int64_t soft_threshold_tokens = kSoftThresholdTokens;
  std::optional<std::int64_t> responses_compact_threshold;   // provider-side compaction threshold
  std::optional<std::int64_t> transcript_prompt_tokens;      // last usage read from the transcript
  std::optional<std::int64_t> fresh_persisted_total_tokens;  // SessionEntry.totalTokens, fresh
  std::optional<std::int64_t> stale_persisted_total_tokens;  // SessionEntry.totalTokens, stale
  std::int64_t last_output_tokens = 0;
  std::int64_t prompt_estimate_tokens = 0;  // the incoming prompt
  std::optional<std::uint64_t> transcript_bytes;  // size of the active transcript file
};

// Why a compaction runs before the turn (the compaction's reason: "transcript_bytes", "preflight").
enum class preflight_trigger { transcript_bytes, tokens };
const char* preflight_reason(preflight_trigger trigger) noexcept;

// threshold = max(window - reserve_tokens_floor - soft_threshold, responses threshold, 0);
// projected = max(transcript + output + prompt, fresh + output + prompt, stale);
// transcript_bytes if truncate_after_compaction and max_active_transcript_bytes > 0 and
// bytes >= that limit (it wins when both hold); else tokens if threshold > 0 and projected > 0
// and projected >= threshold; else none.
std::optional<preflight_trigger> should_compact_before_turn(const compaction_settings& settings,
                                                            const preflight_state& state);

struct cut_point {
  std::size_t first_kept_entry_index = 0;
  std::optional<std::size_t> turn_start_index;  // set when the cut is inside a turn
  bool is_split_turn = false;
};

// pi `findCutPoint` over path[start, end).
cut_point find_cut_point(session_path path, std::size_t start, std::size_t end, std::int64_t keep_recent_tokens);

struct compaction_plan {
  std::string first_kept_entry_id;
  std::size_t first_kept_entry_index = 0;
  std::size_t boundary_start = 0;  // first entry after the previous compaction's kept boundary
  bool is_split_turn = false;
  std::optional<std::size_t> turn_start_index;
  std::vector<boost::json::object> messages_to_summarize;  // pi AgentMessages, compactions excluded
  std::vector<boost::json::object> turn_prefix_messages;   // [turn start, cut) of a split turn
  std::int64_t tokens_before = 0;  // estimate_context_tokens of the whole context now
  std::optional<std::string> previous_summary;
  std::vector<std::string> read_files;      // read but not modified, sorted as JS sorts
  std::vector<std::string> modified_files;  // written or edited, sorted
};

std::optional<compaction_plan> plan_compaction(session_path path, const compaction_settings& settings);

// The compaction entry's `details`: {"readFiles":[...],"modifiedFiles":[...]}.
boost::json::object plan_details_json(const compaction_plan& plan);

// pi `buildSessionContext(path).messages`: the AgentMessages a model sees for this path
// (latest compaction's summary first, then the kept entries). Used for tokens_before.
std::vector<boost::json::object> session_context_messages(session_path path);

}  // namespace sessionrt::actors
