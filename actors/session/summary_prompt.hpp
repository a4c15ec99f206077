// The summarizer requests a compaction sends to a model, and how their answers become the
// compaction summary [R§6.4]. Pure text building; the model runner is called elsewhere.
// - Texts and layout are pi-coding-agent 0.73.1's (`generateSummary`,
//   `generateTurnPrefixSummary`, `compact`, `serializeConversation`, `convertToLlm`).
// - max_tokens = min(floor(0.8 * reserve), model max) for the history, floor(0.5 * reserve)
//   (same cap) for a split turn's prefix; a model max <= 0 or absent means no cap.
// - An empty previous summary or empty custom instructions count as absent (JS falsy).
// - OpenClaw's identifier policy ("strict" by default) is folded into the custom
//   instructions exactly as `buildCompactionSummarizationInstructions` does.
// - Strings are UTF-8; tool results are cut at 2000 UTF-16 units like JS `slice`, except
//   that a surrogate pair straddling the cut is dropped whole (JS would keep half of it).
#pragma once
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/session/compaction_planner.hpp"

namespace sessionrt::actors {

extern const std::string_view kSummarizationSystemPrompt;
extern const std::string_view kSummarizationPrompt;
extern const std::string_view kUpdateSummarizationPrompt;
extern const std::string_view kTurnPrefixSummarizationPrompt;
extern const std::string_view kIdentifierPreservationInstructions;
extern const std::string_view kSplitTurnSeparator;  // "\n\n---\n\n**Turn Context (split turn):**\n\n"
extern const std::string_view kNoPriorHistory;      // "No prior history."
inline constexpr std::size_t kToolResultMaxChars = 2000;

struct summary_request {
  std::string system_prompt;
  std::string user_text;  // the single user message (one text block)
  std::int64_t max_tokens = 0;
};

enum class identifier_policy { strict, off, custom };

struct summary_options {
  std::int64_t reserve_tokens = 16384;        // the effective reserve
  std::optional<std::int64_t> model_max_tokens;
  std::optional<std::string> custom_instructions;  // `/compact <instructions>`
  // OpenClaw wrapper; nullopt = plain pi behaviour (custom instructions used as given).
  std::optional<identifier_policy> identifiers;
  std::optional<std::string> identifier_instructions;  // text for identifier_policy::custom
};

// pi convertToLlm: bashExecution/custom/branchSummary/compactionSummary become user messages,
// user/assistant/toolResult pass through, anything else (and excluded bash runs) is dropped.
std::vector<boost::json::object> convert_to_llm(std::span<const boost::json::object> messages);

// pi serializeConversation over LLM messages: "[User]: ...", "[Assistant thinking]: ...",
// "[Assistant]: ...", "[Assistant tool calls]: name(k=<json>, ...); ...", "[Tool result]: ...",
// joined by blank lines.
std::string serialize_conversation(std::span<const boost::json::object> llm_messages);

// text, or its first 2000 units + "\n\n[... N more characters truncated]".
std::string truncate_for_summary(std::string_view text, std::size_t max_chars = kToolResultMaxChars);

// OpenClaw buildCompactionSummarizationInstructions: the instructions pi appends after
// "Additional focus: ". nullopt when there is nothing to add.
std::optional<std::string> effective_custom_instructions(const summary_options& options);

// generateSummary's request for `messages` (AgentMessages; converted to LLM form here).
summary_request history_summary_request(std::span<const boost::json::object> messages,
                                        const std::optional<std::string>& previous_summary,
                                        const summary_options& options);

// generateTurnPrefixSummary's request.
summary_request turn_prefix_summary_request(std::span<const boost::json::object> messages,
                                            const summary_options& options);

// The calls `compact` makes for a plan: history is absent only for a split turn with nothing
// before the turn (its summary is then "No prior history."); turn_prefix only for a split
// turn with prefix messages.
struct summary_requests {
  std::optional<summary_request> history;
  std::optional<summary_request> turn_prefix;
};
summary_requests summary_requests_for(const compaction_plan& plan, const summary_options& options);

// "\n\n<read-files>\n...\n</read-files>\n\n<modified-files>\n...\n</modified-files>" (each
// section only when non-empty; "" when both are empty).
std::string format_file_operations(std::span<const std::string> read_files,
                                   std::span<const std::string> modified_files);

// history + "\n\n---\n\n**Turn Context (split turn):**\n\n" + prefix
std::string join_split_turn_summary(std::string_view history_summary, std::string_view turn_prefix_summary);

// The compaction entry's summary from the model answers to summary_requests_for(plan):
// the history answer (or "No prior history."), joined with the prefix answer when a prefix
// was requested, followed by the file-operation tags.
std::string assemble_summary(const compaction_plan& plan, std::optional<std::string_view> history_answer,
                             std::optional<std::string_view> turn_prefix_answer);

}  // namespace sessionrt::actors
