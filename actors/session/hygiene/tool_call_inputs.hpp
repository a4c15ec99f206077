// tool_call_inputs: sanitizeToolCallInputs [R§8.2 step 6], before pairing so that a call
// dropped here never gets a synthetic result (lesson of OpenClaw #8264).
// - tool-call blocks (toolCall / toolUse / functionCall) with neither `arguments` nor `input`,
//   without a non-empty string id, with a blank name, or with a name not in
//   allowed_tool_names (when that set is not empty) are removed;
// - blocks carrying `partialJson` (an unfinished streamed call) are removed, except finalized
//   OpenAI Responses calls (policy openai_responses, id containing '|');
// - names are trimmed;
// - an assistant left with no content is dropped (an error turn keeps its placeholder, set
//   before by replay_normalizer).
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

void sanitize_tool_call_inputs(boost::json::array& messages, const transcript_policy& policy,
                               const hygiene_options& options, hygiene_report& report);

}  // namespace sessionrt::actors::hygiene
