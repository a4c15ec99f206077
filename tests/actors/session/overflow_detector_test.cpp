// Overflow detection [R§6.2]. The table's expectations were produced with node 20 from the
// installed packages: OpenClaw 2026.9.6 `isContextOverflowErrorFromTables` and
// `isLikelyContextOverflowError` composed as classify-*.mjs composes them (no provider plugin
// loaded), and pi-ai 0.73.1 `isContextOverflow({stopReason:"error", errorMessage})`.
// Rows marked "R§6.2" are where the JSON-era rule listed in the reference (which we follow)
// is broader than 2026.9.6; there the expectation is the reference's.
#include <catch2/catch.hpp>

#include <string>

#include "actors/session/overflow_detector.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
struct overflow_case {
  const char* text;
  bool openclaw;  // is_context_overflow_error
  bool likely;    // is_likely_context_overflow_error
  bool pi;        // matches_pi_overflow_pattern
};

const overflow_case kCases[] = {
    {"400 request_too_large: Request exceeds the maximum size", true, true, true},
    {"Error: context length exceeded", true, true, true},
    {"This model's maximum context length is 128000 tokens", true, true, true},
    {"prompt is too long: 213462 tokens > 200000 maximum", true, true, true},
    {"Prompt too long for this deployment", true, true, false},
    {"Request exceeds model context window", true, true, false},
    {"The request hit the model token limit", true, true, false},
    {"context overflow: 250000 tokens", true, true, false},
    {"input would exceed context limit", true, true, false},
    {"This request exceeds the model's maximum context", true, true, false},
    {"Unhandled stop reason: model_context_window_exceeded", true, true, true},
    {"error code: context_overflow", true, true, false},
    {"INVALID_ARGUMENT: The input token count exceeds the maximum number of tokens allowed", true, true, true},
    {"maximum number of tokens exceeded (invalid_argument)", true, true, false}, // R§6.2: invalid_argument *together with* maximum number of tokens, any order (9.6 requires this order)
    {"Input exceeds the maximum number of tokens", true, true, false},
    {"The context window ran out of room", true, true, false},
    {"ran out of space in the context length", true, true, false}, // R§6.2: context-window *or context-length* mention + ran out of space (9.6 accepts only "context window")
    {"Request size exceeds the context window", true, true, true},
    {"max_tokens would exceed the context", true, true, false},
    {"input length and max_tokens exceed context limit (i.e 190000 + 16000 > 200000)", true, true, false},
    {"413 Payload Too Large", true, true, false},
    {"错误：上下文过长，请压缩上下文", true, true, false},
    {"超出最大上下文", true, true, false},
    {"Input is too long for this model", true, true, false},
    {"Ollama error: context length exceeded, too many tokens", true, true, true},
    {"total tokens 140000 exceeds the model's max 128000", true, true, false},
    {"request (150000 tokens) exceeds the available context size (131072 tokens), try increasing it", true, true, true},
    {"Mistral API error: token limit exceeded for request", true, true, true}, // R§6.2: the Mistral provider hook pattern (9.6 without plugins loaded says false)
    {"prompt has 140000 tokens, but the configured context size is 131072 tokens", true, true, false},
    {"The input (140000 tokens) is longer than the model's context length (131072 tokens).", true, true, false},
    {"input length 140000 tokens exceeds the model limit", true, true, false},
    {"413 Request too large: tokens per minute (TPM) limit reached", false, false, false},
    {"Rate limit reached for requests", false, false, false},
    {"Reasoning is mandatory for this endpoint and cannot be disabled", false, false, false},
    {"429 Too Many Requests", false, false, false},
    {"context window exceeded", false, true, false},
    {"Your credit balance is too low; the prompt exceeds the limit", false, false, false},
    {"Request reached organization TPD rate limit", false, false, false},
    {"Model context window too small (minimum is 16000)", false, false, false},
    {"prompt exceeds the limit", false, true, false},
    {"quota exceeded: prompt exceeds limit", false, false, false},
    {"402 Payment Required: prompt too long", true, false, false},
    {"Your input exceeds the context window of this model", false, false, true},
    {"This model's maximum prompt length is 131072 but the request contains 537812 tokens", false, false, true},
    {"Please reduce the length of the messages or completion", false, false, true},
    {"prompt token count of 200000 exceeds the limit of 128000", false, true, true},
    {"the request exceeds the available context size, try increasing it", false, false, true},
    {"tokens to keep from the initial prompt is greater than the context length", false, false, true},
    {"invalid params, context window exceeds limit", false, true, true},
    {"Your request exceeded model token limit: 262144 (requested: 300000)", true, true, true},
    {"413 status code (no body)", false, false, true},
    {"400 (no body)", false, false, true},
    {"Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length", true, true, true},
    {"prompt too long; exceeded max context length by 100 tokens", true, true, true},
    {"Throttling error: Too many tokens, please wait before trying again.", false, false, false},
    {"Rate limit: too many tokens", false, false, false},
    {"input is too long for requested model", false, false, true},
    {"Service unavailable: context_length_exceeded", false, false, false},
    {"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)", false, true, true},
    {"model requested 201000 tokens", false, false, false},
    {"Your request exceeded model token limit: 262144 (requested: 300,000)", true, true, true},
    {"This request resulted in 250000 tokens", false, false, false},
    {"input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000", true, true, false},
    {"prompt is too long: 213462, model maximum context length: 200000", true, true, true},
    {"hello world", false, false, false},
};

boost::json::object assistant(std::string stop, std::int64_t input, std::int64_t cache_read, std::int64_t output,
                              std::optional<std::string> error = std::nullopt) {
  assistant_fields a;
  a.model = "glm-4.6";
  a.stop_reason = std::move(stop);
  a.usage.input = input;
  a.usage.cache_read = cache_read;
  a.usage.output = output;
  a.error_message = std::move(error);
  return assistant_message(a);
}
}  // namespace

TEST_CASE("overflow patterns: OpenClaw explicit, likely, and pi-ai checks per message") {
  for (const auto& c : kCases) {
    INFO(c.text);
    CHECK(is_context_overflow_error(c.text) == c.openclaw);
    CHECK(is_likely_context_overflow_error(c.text) == c.likely);
    CHECK(matches_pi_overflow_pattern(c.text) == c.pi);
  }
}

TEST_CASE("overflow exclusions: TPM, rate limit, billing and reasoning messages are not overflows") {
  CHECK_FALSE(is_context_overflow_error("413 Request too large: tokens per minute (TPM) limit reached"));
  CHECK_FALSE(is_context_overflow_error("prompt is too long (TPM limit)"));
  CHECK_FALSE(is_context_overflow_error("Reasoning is required: prompt is too long"));
  CHECK_FALSE(is_likely_context_overflow_error("Rate limit reached: request exceeds the token limit"));
  CHECK_FALSE(is_likely_context_overflow_error("402 Payment Required: prompt too long"));
  CHECK(is_billing_error_text("402 Payment Required: prompt too long"));
  CHECK(is_rate_limit_error_text("429 Too Many Requests"));
  CHECK(is_rate_limit_error_text("Throttling error: Too many tokens, please wait before trying again."));
  CHECK_FALSE(is_rate_limit_error_text("prompt is too long"));
  CHECK_FALSE(matches_pi_overflow_pattern("Rate limit: too many tokens"));
  CHECK_FALSE(matches_pi_overflow_pattern("Throttling error: Too many tokens, please wait before trying again."));
  CHECK_FALSE(is_context_overflow_error(""));
  CHECK_FALSE(is_likely_context_overflow_error(""));
}

TEST_CASE("is_context_overflow: error text, silent overflow and length-stop overflow") {
  CHECK(is_context_overflow(assistant("error", 0, 0, 0, "prompt is too long: 213462 tokens > 200000 maximum"), 0));
  CHECK_FALSE(is_context_overflow(assistant("error", 0, 0, 0, "429 rate limit: too many tokens"), 200000));
  CHECK_FALSE(is_context_overflow(assistant("stop", 0, 0, 0, "prompt is too long"), 200000));  // text only on error
  // Silent overflow (z.ai): a successful turn whose input + cacheRead exceeds the window.
  CHECK(is_context_overflow(assistant("stop", 150000, 60000, 10), 200000));
  CHECK_FALSE(is_context_overflow(assistant("stop", 140000, 60000, 10), 200000));  // == window is no overflow
  CHECK_FALSE(is_context_overflow(assistant("stop", 150000, 60000, 10), 0));      // window unknown
  CHECK_FALSE(is_context_overflow(assistant("toolUse", 150000, 60000, 10), 200000));
  // Length stop with no output and a full window (Xiaomi MiMo), pi-ai 0.73.1.
  CHECK(is_context_overflow(assistant("length", 198000, 0, 0), 200000));
  CHECK_FALSE(is_context_overflow(assistant("length", 198000, 0, 5), 200000));
  CHECK_FALSE(is_context_overflow(assistant("length", 190000, 0, 0), 200000));
}

TEST_CASE("extract_observed_overflow_token_count reads the prompt size a provider reported") {
  // Expectations from node 20 running OpenClaw 2026.9.6's extractObservedOverflowTokenCount
  // (its source text evaluated as is).
  CHECK(extract_observed_overflow_token_count("prompt is too long: 213462 tokens > 200000 maximum") == 213462);
  CHECK(extract_observed_overflow_token_count("prompt is too long: 213462, model maximum context length: 200000") ==
        213462);
  CHECK(extract_observed_overflow_token_count(
            "input length and max_tokens exceed context limit (i.e 190000 + 16000 > 200000)") == 206000);
  CHECK(extract_observed_overflow_token_count(
            "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000") == 222000);
  CHECK(extract_observed_overflow_token_count("Your request exceeded model token limit: 262144 (requested: 300,000)") ==
        300000);
  CHECK(extract_observed_overflow_token_count("model requested 201000 tokens") == 201000);
  CHECK(extract_observed_overflow_token_count("This request resulted in 250000 tokens") == 250000);
  CHECK_FALSE(extract_observed_overflow_token_count("Request size exceeds the context window"));
  CHECK_FALSE(extract_observed_overflow_token_count("requested 0 tokens"));
  CHECK_FALSE(extract_observed_overflow_token_count(""));
}

TEST_CASE("overflow detection stays bounded on a huge error body") {
  std::string body(2 * 1024 * 1024, 'a');
  body += " prompt is too long";
  CHECK(is_context_overflow_error(body));  // substring rules see the whole text
  CHECK_FALSE(extract_observed_overflow_token_count(body));
  std::string noise(2 * 1024 * 1024, 'x');
  CHECK_FALSE(is_likely_context_overflow_error(noise));
}

namespace {
// pi-ai 0.73.1 OVERFLOW_PATTERNS, each with a provider message it is there for (the messages
// of overflow.js's comments, completed as the providers send them). Node 20 running pi-ai's
// isContextOverflow({stopReason:"error", errorMessage}, 200000) says true for every one.
const char* const kPiOverflowMessages[] = {
    "prompt is too long: 213462 tokens > 200000 maximum",                                       // Anthropic
    R"(413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}})",  // Anthropic 413
    "ValidationException: Input is too long for requested model.",                             // Amazon Bedrock
    "Your input exceeds the context window of this model. Please adjust your input and try again.",  // OpenAI
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",  // Google
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",     // xAI
    "Please reduce the length of the messages or completion.",                                  // Groq
    "This endpoint's maximum context length is 128000 tokens. However, you requested about 150000 tokens.",  // OpenRouter
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",  // OpenAI chat
    "prompt token count of 200000 exceeds the limit of 128000",                                 // GitHub Copilot
    "the request exceeds the available context size, try increasing it",                       // llama.cpp
    "tokens to keep from the initial prompt is greater than the context length",               // LM Studio
    "invalid params, context window exceeds limit (2013)",                                      // MiniMax
    "Your request exceeded model token limit: 262144 (requested: 300000)",                     // Kimi For Coding
    "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",  // Mistral
    "Unhandled stop reason: model_context_window_exceeded",                                     // z.ai
    "prompt too long; exceeded max context length by 100 tokens",                              // Ollama
    "prompt too long; exceeded context length by 100 tokens",                                  // Ollama
    "context_length_exceeded",                                                                  // generic
    "Error: Context Length Exceeded",                                                           // generic
    "Request contains too many tokens",                                                         // generic
    "Token limit exceeded for this request",                                                    // generic
    "400 status code (no body)",                                                                // Cerebras
    "413 (no body)",                                                                            // Cerebras
    "400(no body)",                                                                             // Cerebras
    "PROMPT IS TOO LONG",                                                                       // /i
};

// Messages no pi-ai pattern takes as an overflow: rate limits first (pi-ai's own exclusions, and
// OpenClaw's TPM hint, which pi-ai 0.73.1 itself lacks: the last two rows are true in pi-ai),
// then near misses of the patterns.
const char* const kPiNotOverflowMessages[] = {
    "rate limit exceeded: too many tokens per minute",
    "Throttling error: Too many tokens, please wait before trying again.",
    "Service unavailable: context_length_exceeded",
    "429 Too Many Requests: token limit exceeded",
    "HTTP 400 (no body)",   // the Cerebras pattern is anchored at the start
    " 400 (no body)",
    "500 (no body)",
    "Internal server error",
    "maximum context length is unknown",
    "exceeds the limit of tokens",
    "Too many tokens per minute, please slow down",  // TPM hint (pi-ai 0.73.1: true)
    "TPM limit reached: too many tokens",            // TPM hint (pi-ai 0.73.1: true)
};
}  // namespace

TEST_CASE("pi-ai overflow patterns: each provider message matches, rate limits do not") {
  for (const char* text : kPiOverflowMessages) {
    INFO(text);
    CHECK(matches_pi_overflow_pattern(text));
    CHECK(is_context_overflow(assistant("error", 0, 0, 0, std::string(text)), 200000));
    CHECK(is_context_overflow(assistant("error", 0, 0, 0, std::string(text)), 0));
  }
  for (const char* text : kPiNotOverflowMessages) {
    INFO(text);
    CHECK_FALSE(matches_pi_overflow_pattern(text));
    CHECK_FALSE(is_context_overflow(assistant("error", 0, 0, 0, std::string(text)), 200000));
  }
  // The whole text is searched, however long, as pi-ai does.
  std::string body(1024 * 1024, 'x');
  body += "\nThis model's maximum context length is 128000 tokens.";
  CHECK(matches_pi_overflow_pattern(body));
  CHECK_FALSE(matches_pi_overflow_pattern(body + " (rate limit)"));
}

TEST_CASE("is_context_overflow: silent overflow checks at their boundaries") {
  constexpr std::int64_t window = 200000;
  // stop: input + cacheRead > window.
  CHECK(is_context_overflow(assistant("stop", 200001, 0, 50), window));
  CHECK(is_context_overflow(assistant("stop", 100000, 100001, 50), window));
  CHECK_FALSE(is_context_overflow(assistant("stop", 200000, 0, 50), window));
  CHECK_FALSE(is_context_overflow(assistant("stop", 100000, 100000, 0), window));
  // length with no output: input + cacheRead >= 0.99 * window (198000 of 200000).
  CHECK(is_context_overflow(assistant("length", 198000, 0, 0), window));
  CHECK(is_context_overflow(assistant("length", 98000, 100000, 0), window));
  CHECK(is_context_overflow(assistant("length", 250000, 0, 0), window));
  CHECK_FALSE(is_context_overflow(assistant("length", 197999, 0, 0), window));
  CHECK_FALSE(is_context_overflow(assistant("length", 97999, 100000, 0), window));
  CHECK_FALSE(is_context_overflow(assistant("length", 198000, 0, 1), window));
  // 0.99 * 1000 = 990 (a window where the product is not a whole number of tokens: 0.99 * 999).
  CHECK(is_context_overflow(assistant("length", 990, 0, 0), 1000));
  CHECK_FALSE(is_context_overflow(assistant("length", 989, 0, 0), 1000));
  CHECK(is_context_overflow(assistant("length", 990, 0, 0), 999));   // 990 >= 989.01
  CHECK_FALSE(is_context_overflow(assistant("length", 989, 0, 0), 999));
  // Other stop reasons never overflow by usage; an unknown window checks the text only.
  CHECK_FALSE(is_context_overflow(assistant("error", 300000, 0, 0), window));
  CHECK_FALSE(is_context_overflow(assistant("toolUse", 300000, 0, 0), window));
  CHECK_FALSE(is_context_overflow(assistant("length", 300000, 0, 0), 0));
  CHECK_FALSE(is_context_overflow(assistant("stop", 300000, 0, 0), 0));
}
