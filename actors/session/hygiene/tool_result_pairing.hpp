// tool_result_pairing: repairToolUseResultPairing [R§8.3]. After it, every tool call of a
// kept assistant is followed — directly, in call order — by exactly one toolResult, and no
// toolResult is without its call:
// - an assistant's span runs to the next assistant that has tool calls; its results are the
//   span's toolResults with a matching id (a legacy result without an id is adopted when
//   exactly one call has its toolName); the rest of the span follows the results;
// - a call without a real result in its span takes a real one found later (a displaced
//   result, moved); a synthetic result (details.openclawSyntheticMissingToolResult, e.g.
//   inserted by the on-disk repair) is kept only when no real one exists anywhere after the
//   call: a real result that arrives later replaces it;
// - still nothing: a synthetic error result {role:"toolResult", toolCallId, toolName (or
//   "unknown"), content:[text], details:{openclawSyntheticMissingToolResult:true},
//   isError:true, timestamp} when the policy allows synthetic results, else the call is
//   removed (an assistant left empty is dropped);
// - duplicates: the first real result wins; toolResults no span claims are dropped;
// - an assistant with stopReason error / aborted gets no synthesis and no displaced results:
//   its span's results are kept (or dropped, errored_result_policy::drop) and its unanswered
//   calls removed (an emptied error turn keeps the failed-turn text);
// - finally `details` is removed from every toolResult (stripToolResultDetails).
// Text of a synthetic result: "aborted" (OpenAI Responses) or kMissingToolResultText.
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

inline constexpr std::string_view kMissingToolResultText =
    "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair.";

void repair_tool_result_pairing(boost::json::array& messages, const transcript_policy& policy,
                                const hygiene_options& options, hygiene_report& report);

// Removes `details` from every toolResult; returns how many had one.
std::size_t strip_tool_result_details(boost::json::array& messages);

}  // namespace sessionrt::actors::hygiene
