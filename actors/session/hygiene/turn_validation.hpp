// turn_validation: the turn shapes providers insist on [R§8.2 step 12, validateReplayTurns].
// - apply_google_turn_ordering: a context whose first message is an assistant gets
//   {role:"user", content:"(session bootstrap)"} in front (applyGoogleTurnOrdering; the
//   reference also records a `custom` entry once — persisting is the caller's business);
// - validate_gemini_turns: consecutive assistant turns are merged;
// - validate_anthropic_turns: consecutive assistant turns merged, tool calls with no matching
//   toolResult before the next assistant removed (dangling tool uses; an assistant left empty
//   is dropped), then consecutive user turns merged.
// Merging concatenates the content arrays (string content becomes one text block); the
// merged message keeps the later turn's other fields, and timestamp = later ?? earlier.
// toolResult messages are their own role here: never merged into a user turn.
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

inline constexpr std::string_view kSessionBootstrapText = "(session bootstrap)";

void apply_google_turn_ordering(boost::json::array& messages, hygiene_report& report);
void merge_consecutive(boost::json::array& messages, std::string_view role, std::size_t& merged);
void strip_dangling_tool_uses(boost::json::array& messages, hygiene_report& report);
void validate_turns(boost::json::array& messages, const transcript_policy& policy, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
