// transcript_policy: which hygiene rules a provider needs, from provider / API / model id —
// the matrix of [R§8.5] (resolveTranscriptPolicy plus the provider plugins):
//   openai_responses   openai-responses / openai-chatgpt-responses / azure-openai-responses /
//                      openai-codex-responses: images only, no id rewrite, pairing with the
//                      "aborted" text and errored assistants' results dropped, no turn validation;
//   openai_completions openai-completions and unowned OpenAI-compatible providers (OpenRouter,
//                      ...): ids strict, assistant-first fix, Gemini + Anthropic turn validation,
//                      reasoning dropped from history unless the model reasons (traits) or is a
//                      Kimi / MiMo model;
//   google             google-* providers or APIs: full sanitize, ids strict, thought signatures
//                      must be base64, pairing, assistant-first fix, Gemini turns;
//   anthropic          anthropic / amazon-bedrock / anthropic-vertex (or an Anthropic / Bedrock
//                      API): full sanitize, ids strict keeping native toolu_ ids, signatures
//                      preserved (pre-compaction ones stripped), Anthropic turns; thinking blocks
//                      dropped for Claude models before 4.x;
//   mistral            the mistral provider and Mistral models on OpenRouter: the completions
//                      row with ids strict9;
//   other              everything else: images only (plus pairing, on by default).
// Pure and total: any strings give a policy (unknown ones give `other`); matching is
// case-insensitive on trimmed input.
#pragma once
#include <string>
#include <string_view>

namespace sessionrt::actors::hygiene {

enum class policy_family { openai_responses, openai_completions, google, anthropic, mistral, other };
const char* policy_family_name(policy_family f) noexcept;

enum class sanitize_mode { images_only, full };
enum class tool_call_id_mode { strict, strict9 };
enum class errored_result_policy { keep, drop };

struct transcript_policy {
  policy_family family = policy_family::other;
  sanitize_mode mode = sanitize_mode::images_only;
  // Tool-call ids rewritten to the provider's alphabet (occurrence aware, [R§8.4]).
  bool sanitize_tool_call_ids = false;
  tool_call_id_mode id_mode = tool_call_id_mode::strict;
  bool preserve_native_anthropic_ids = false;  // keep ^toolu_[A-Za-z0-9_]+$ on first use
  bool openai_duplicate_id_style = false;      // keep ^call_[A-Za-z0-9_-]+$ first, "call_<24 hex>" after
  // Tool-result pairing [R§8.3]; synthetic error results for missing ones when allowed, else
  // the unanswered calls are removed.
  bool repair_tool_use_result_pairing = true;
  bool allow_synthetic_tool_results = false;
  errored_result_policy errored_results = errored_result_policy::keep;
  bool missing_result_aborted_text = false;  // OpenAI Responses: the synthetic text is "aborted"
  // Thinking.
  bool preserve_signatures = false;          // signed thinking: strip pre-compaction / blank signatures
  bool sanitize_thought_signatures = false;  // Gemini: signatures must be base64
  bool drop_thinking_blocks = false;
  bool drop_reasoning_from_history = false;
  // Turns.
  bool apply_google_turn_ordering = false;  // assistant first -> "(session bootstrap)" user turn
  bool validate_gemini_turns = false;       // merge consecutive assistant turns
  bool validate_anthropic_turns = false;    // + strip dangling tool uses, merge consecutive user turns
};

// What the model says about itself, when the caller knows it (model catalog `reasoning`).
struct model_traits {
  bool reasoning = false;
};

transcript_policy resolve_transcript_policy(std::string_view provider, std::string_view api, std::string_view model_id);
transcript_policy resolve_transcript_policy(std::string_view provider, std::string_view api, std::string_view model_id,
                                            const model_traits& traits);

}  // namespace sessionrt::actors::hygiene
