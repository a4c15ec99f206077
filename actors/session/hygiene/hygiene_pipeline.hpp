// hygiene_pipeline: what reaches the model [SPEC §5, R§8.2]. One call on the request's
// messages right before the model call:
//   auto policy = resolve_transcript_policy(provider, api, model_id);
//   auto report = sanitize_for_provider(request.messages, policy, options);
// The messages are edited in place; they must be the caller's COPY of the context (the stored
// transcript and the session's cached context are never rewritten by this). Order:
//   0. the latest compaction's time is read (compactionSummary messages), then, with
//      options.llm_form, non-LLM roles become user turns (pi convertToLlm);
//   1. inter-session provenance marker;
//   2. assistant replay normalization (blank users, mirrors, NO_REPLY blocks, reasoning-only
//      length turns, empty error turns, trailing error sentinels);
//   3. image sanitizing, blank text removal;
//   4-5. thinking: signatures, thought signatures, dropped thinking blocks;
//   6. tool-call input validation;
//   8. tool-call id rewrite (when the policy sanitizes ids; never for OpenAI Responses);
//   9. tool-result pairing repair, then toolResult details stripped;
//   12. Google turn-ordering bootstrap; Gemini / Anthropic turn validation.
// Numbers are [R§8.2]'s steps; 7 (Responses reasoning downgrades, call_|fc_ ids), 10 (provider
// plugin hooks) and 11 (model-snapshot entries, which persist) are not done here.
// Never fails: any JSON array gives an array (non-object elements are dropped); the report
// counts what each rule did.
#pragma once
#include <boost/json.hpp>

#include "actors/session/hygiene/hygiene_report.hpp"
#include "actors/session/hygiene/transcript_policy.hpp"

namespace sessionrt::actors::hygiene {

hygiene_report sanitize_for_provider(boost::json::array& messages, const transcript_policy& policy,
                                     const hygiene_options& options = {});

}  // namespace sessionrt::actors::hygiene
