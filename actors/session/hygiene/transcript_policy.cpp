#include "actors/session/hygiene/transcript_policy.hpp"

#include <cctype>

#include "messages/ascii_text.hpp"
#include "messages/js_text.hpp"

namespace sessionrt::actors::hygiene {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

bool is_responses_api(std::string_view api) {
  return api == "openai-responses" || api == "openai-chatgpt-responses" || api == "azure-openai-responses" ||
         api == "openai-codex-responses";
}
bool is_google_api(std::string_view api) {
  return api == "google-generative-ai" || api == "google-vertex" || api == "google-gemini-cli" ||
         starts_with(api, "google-");
}
bool is_anthropic_api(std::string_view api) {
  return api == "anthropic-messages" || api == "bedrock-converse-stream" || starts_with(api, "anthropic-") ||
         starts_with(api, "bedrock-");
}
bool is_google_provider(std::string_view p) { return p == "google" || starts_with(p, "google-"); }
bool is_anthropic_provider(std::string_view p) {
  return p == "anthropic" || p == "amazon-bedrock" || p == "anthropic-vertex" || p == "bedrock";
}
bool is_mistral_model(std::string_view model) {
  return starts_with(model, "mistralai/") || contains(model, "mistral") || contains(model, "codestral") ||
         contains(model, "devstral") || contains(model, "magistral") || contains(model, "pixtral") ||
         contains(model, "ministral");
}

// Claude models before 4.x cannot replay thinking blocks (shouldPreserveThinkingBlocks).
bool is_pre_4_claude(std::string_view model) {
  auto at = model.find("claude-");
  if (at == std::string_view::npos) return false;
  std::string_view rest = model.substr(at + 7);
  if (starts_with(rest, "instant")) return true;
  for (std::string_view family : {"opus-", "sonnet-", "haiku-"})
    if (starts_with(rest, family)) {
      rest.remove_prefix(family.size());
      break;
    }
  if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) return false;
  int major = 0;
  std::size_t k = 0;
  while (k < rest.size() && std::isdigit(static_cast<unsigned char>(rest[k])) && k < 2) major = major * 10 + (rest[k++] - '0');
  if (k == 2 && major >= 20) return false;  // a date, not a version
  return major < 4;
}

transcript_policy responses_row() {
  transcript_policy p;
  p.family = policy_family::openai_responses;
  p.allow_synthetic_tool_results = true;
  p.errored_results = errored_result_policy::drop;
  p.missing_result_aborted_text = true;
  return p;
}

transcript_policy completions_row(std::string_view model, const model_traits& traits) {
  transcript_policy p;
  p.family = policy_family::openai_completions;
  p.sanitize_tool_call_ids = true;
  p.id_mode = tool_call_id_mode::strict;
  p.apply_google_turn_ordering = true;
  p.validate_gemini_turns = true;
  p.validate_anthropic_turns = true;
  const bool replays_reasoning = traits.reasoning || contains(model, "kimi") || contains(model, "mimo");
  p.drop_reasoning_from_history = !replays_reasoning;
  return p;
}

transcript_policy google_row() {
  transcript_policy p;
  p.family = policy_family::google;
  p.mode = sanitize_mode::full;
  p.sanitize_tool_call_ids = true;
  p.id_mode = tool_call_id_mode::strict;
  p.sanitize_thought_signatures = true;
  p.allow_synthetic_tool_results = true;
  p.apply_google_turn_ordering = true;
  p.validate_gemini_turns = true;
  return p;
}

transcript_policy anthropic_row(std::string_view model) {
  transcript_policy p;
  p.family = policy_family::anthropic;
  p.mode = sanitize_mode::full;
  p.sanitize_tool_call_ids = true;
  p.id_mode = tool_call_id_mode::strict;
  p.preserve_native_anthropic_ids = true;
  p.preserve_signatures = true;
  p.allow_synthetic_tool_results = true;
  p.validate_anthropic_turns = true;
  p.drop_thinking_blocks = is_pre_4_claude(model);
  return p;
}

transcript_policy mistral_row(std::string_view model, const model_traits& traits) {
  transcript_policy p = completions_row(model, traits);
  p.family = policy_family::mistral;
  p.id_mode = tool_call_id_mode::strict9;
  return p;
}

}  // namespace

const char* policy_family_name(policy_family f) noexcept {
  switch (f) {
    case policy_family::openai_responses: return "openai-responses";
    case policy_family::openai_completions: return "openai-completions";
    case policy_family::google: return "google";
    case policy_family::anthropic: return "anthropic";
    case policy_family::mistral: return "mistral";
    case policy_family::other: return "other";
  }
  return "other";
}

transcript_policy resolve_transcript_policy(std::string_view provider, std::string_view api, std::string_view model_id) {
  return resolve_transcript_policy(provider, api, model_id, model_traits{});
}

transcript_policy resolve_transcript_policy(std::string_view provider_in, std::string_view api_in,
                                            std::string_view model_in, const model_traits& traits) {
  const std::string provider = ascii_lower(js_trim(provider_in)), api = ascii_lower(js_trim(api_in)), model = ascii_lower(js_trim(model_in));
  // Provider-owned rows first (the provider plugins), then the API's row for unowned providers.
  if (provider == "mistral") return mistral_row(model, traits);
  if (provider == "openrouter" && is_mistral_model(model)) return mistral_row(model, traits);
  if (is_anthropic_provider(provider)) return anthropic_row(model);
  if (is_google_provider(provider)) return google_row();
  if (provider == "openai" || provider == "azure-openai" || provider == "openai-codex") {
    if (api.empty() || is_responses_api(api)) return responses_row();
    return completions_row(model, traits);
  }
  if (is_responses_api(api)) return responses_row();
  if (is_anthropic_api(api)) return anthropic_row(model);
  if (is_google_api(api)) return google_row();
  if (api == "openai-completions" || api == "mistral-conversations") {
    if (api == "mistral-conversations") return mistral_row(model, traits);
    return completions_row(model, traits);
  }
  if (provider == "openrouter") return completions_row(model, traits);
  return transcript_policy{};
}

}  // namespace sessionrt::actors::hygiene
