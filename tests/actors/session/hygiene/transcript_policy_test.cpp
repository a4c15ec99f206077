// One test per row of the provider matrix [R§8.5].
#include <catch2/catch.hpp>

#include "actors/session/hygiene/transcript_policy.hpp"

using namespace sessionrt::actors::hygiene;

TEST_CASE("policy: OpenAI Responses APIs are images-only with synthetic 'aborted' results and no turn validation",
          "[hygiene][policy]") {
  for (auto [provider, api] : {std::pair{"openai", "openai-responses"}, std::pair{"openai", "openai-chatgpt-responses"},
                               std::pair{"azure-openai", "azure-openai-responses"}, std::pair{"openai", ""},
                               std::pair{"some-proxy", "openai-responses"}}) {
    INFO(provider << " " << api);
    auto p = resolve_transcript_policy(provider, api, "gpt-5");
    CHECK(p.family == policy_family::openai_responses);
    CHECK(p.mode == sanitize_mode::images_only);
    CHECK_FALSE(p.sanitize_tool_call_ids);
    CHECK(p.allow_synthetic_tool_results);
    CHECK(p.errored_results == errored_result_policy::drop);
    CHECK(p.missing_result_aborted_text);
    CHECK_FALSE(p.validate_gemini_turns);
    CHECK_FALSE(p.validate_anthropic_turns);
    CHECK_FALSE(p.apply_google_turn_ordering);
  }
}

TEST_CASE("policy: OpenAI-compatible completions get strict ids, ordering fix, both turn validations, reasoning dropped",
          "[hygiene][policy]") {
  auto p = resolve_transcript_policy("deepseek", "openai-completions", "deepseek-chat");
  CHECK(p.family == policy_family::openai_completions);
  CHECK(p.sanitize_tool_call_ids);
  CHECK(p.id_mode == tool_call_id_mode::strict);
  CHECK(p.apply_google_turn_ordering);
  CHECK(p.validate_gemini_turns);
  CHECK(p.validate_anthropic_turns);
  CHECK(p.drop_reasoning_from_history);
  CHECK_FALSE(resolve_transcript_policy("deepseek", "openai-completions", "deepseek-r1", model_traits{true})
                  .drop_reasoning_from_history);
  CHECK_FALSE(resolve_transcript_policy("moonshot", "openai-completions", "kimi-k2").drop_reasoning_from_history);
  CHECK_FALSE(resolve_transcript_policy("xiaomi", "openai-completions", "MiMo-7B").drop_reasoning_from_history);
  CHECK(resolve_transcript_policy("openai", "openai-completions", "gpt-4o").family == policy_family::openai_completions);
}

TEST_CASE("policy: Google Gemini is full sanitize, strict ids, base64 thought signatures, pairing, Gemini turns",
          "[hygiene][policy]") {
  for (auto [provider, api] : {std::pair{"google", "google-generative-ai"}, std::pair{"google-vertex", "google-vertex"},
                               std::pair{"Google", ""}}) {
    INFO(provider);
    auto p = resolve_transcript_policy(provider, api, "gemini-2.5-pro");
    CHECK(p.family == policy_family::google);
    CHECK(p.mode == sanitize_mode::full);
    CHECK(p.sanitize_tool_call_ids);
    CHECK(p.id_mode == tool_call_id_mode::strict);
    CHECK(p.sanitize_thought_signatures);
    CHECK(p.repair_tool_use_result_pairing);
    CHECK(p.allow_synthetic_tool_results);
    CHECK(p.apply_google_turn_ordering);
    CHECK(p.validate_gemini_turns);
    CHECK_FALSE(p.validate_anthropic_turns);
  }
}

TEST_CASE("policy: Anthropic and Bedrock Claude preserve signatures, merge user turns, drop thinking before Claude 4",
          "[hygiene][policy]") {
  auto p = resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5");
  CHECK(p.family == policy_family::anthropic);
  CHECK(p.mode == sanitize_mode::full);
  CHECK(p.sanitize_tool_call_ids);
  CHECK(p.preserve_native_anthropic_ids);
  CHECK(p.preserve_signatures);
  CHECK(p.allow_synthetic_tool_results);
  CHECK(p.validate_anthropic_turns);
  CHECK_FALSE(p.drop_thinking_blocks);
  CHECK(resolve_transcript_policy("anthropic", "anthropic-messages", "claude-3-7-sonnet-latest").drop_thinking_blocks);
  CHECK(resolve_transcript_policy("anthropic", "", "claude-instant-1.2").drop_thinking_blocks);
  auto old_bedrock = resolve_transcript_policy("amazon-bedrock", "bedrock-converse-stream",
                                               "anthropic.claude-3-5-sonnet-20240620-v1:0");
  CHECK(old_bedrock.family == policy_family::anthropic);
  CHECK(old_bedrock.drop_thinking_blocks);
  CHECK_FALSE(resolve_transcript_policy("amazon-bedrock", "bedrock-converse-stream",
                                        "us.anthropic.claude-opus-4-1-20250805-v1:0")
                  .drop_thinking_blocks);
  CHECK(resolve_transcript_policy("anthropic-vertex", "", "claude-opus-4").family == policy_family::anthropic);
}

TEST_CASE("policy: Mistral and OpenRouter Mistral models use strict9 ids", "[hygiene][policy]") {
  auto p = resolve_transcript_policy("mistral", "mistral-conversations", "mistral-large-latest");
  CHECK(p.family == policy_family::mistral);
  CHECK(p.sanitize_tool_call_ids);
  CHECK(p.id_mode == tool_call_id_mode::strict9);
  auto r = resolve_transcript_policy("openrouter", "openai-completions", "mistralai/devstral-medium");
  CHECK(r.family == policy_family::mistral);
  CHECK(r.id_mode == tool_call_id_mode::strict9);
}

TEST_CASE("policy: other OpenRouter models take the completions row", "[hygiene][policy]") {
  auto p = resolve_transcript_policy("openrouter", "openai-completions", "anthropic/claude-sonnet-4");
  CHECK(p.family == policy_family::openai_completions);
  CHECK(p.id_mode == tool_call_id_mode::strict);
  CHECK(resolve_transcript_policy("openrouter", "", "google/gemini-2.5-flash").family == policy_family::openai_completions);
}

TEST_CASE("policy: an unowned provider with a Google or Anthropic API mirrors those rows", "[hygiene][policy]") {
  CHECK(resolve_transcript_policy("my-proxy", "anthropic-messages", "claude-sonnet-4").family == policy_family::anthropic);
  CHECK(resolve_transcript_policy("my-proxy", "google-generative-ai", "gemini-2.5-pro").family == policy_family::google);
}

TEST_CASE("policy: everything else is images-only with pairing on", "[hygiene][policy]") {
  for (auto provider : {"ollama", "", "simulated"}) {
    auto p = resolve_transcript_policy(provider, "", "llama3");
    CHECK(p.family == policy_family::other);
    CHECK(p.mode == sanitize_mode::images_only);
    CHECK_FALSE(p.sanitize_tool_call_ids);
    CHECK(p.repair_tool_use_result_pairing);
    CHECK_FALSE(p.allow_synthetic_tool_results);
    CHECK_FALSE(p.validate_anthropic_turns);
    CHECK_FALSE(p.preserve_signatures);
  }
}
