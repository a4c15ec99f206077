// thinking_signatures: what may be replayed of an assistant's reasoning [R§8.2 steps 4-5].
// - preserve_signatures (Anthropic / Bedrock): thinking blocks of assistants older than the
//   latest compaction (timestamp <= latest_compaction_ms) are removed — their signatures were
//   made for a context that no longer exists; on every assistant but the latest, thinking
//   blocks whose signature is missing, blank or not a string are removed too (the latest
//   assistant is never touched: Anthropic refuses a modified latest thinking block);
// - sanitize_thought_signatures (Gemini): a thinkingSignature / thoughtSignature /
//   thought_signature field that is not valid base64 is removed from its block;
// - drop_thinking_blocks: every thinking block goes; drop_reasoning_from_history: every
//   thinking block before the last user turn goes.
// An assistant emptied by any of these keeps one text block, kOmittedReasoningText, so no
// rule here leaves an empty assistant turn. Thinking blocks: type thinking / redacted_thinking
// / reasoning.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <optional>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

// sessionrt's text (the reference names the placeholder but not its words).
inline constexpr std::string_view kOmittedReasoningText = "[assistant reasoning omitted]";

bool is_thinking_block(const boost::json::value& block);

void clean_thinking(boost::json::array& messages, const transcript_policy& policy,
                    std::optional<std::int64_t> latest_compaction_ms, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
