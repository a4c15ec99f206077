#include "actors/session/overflow_detector.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "messages/ascii_text.hpp"
#include "messages/js_regex.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::actors {
namespace {

// --- text helpers ---

// normalizeLowercaseStringOrEmpty is ascii_lower(ascii_trim(...)) below (the patterns are ASCII or CJK).
bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

bool contains_any(std::string_view text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) { return contains(text, n); });
}

std::string_view regex_window(std::string_view text) { return text.substr(0, std::min(text.size(), kRegexScanLimit)); }

// One precompiled JavaScript regex (no flags: the OpenClaw rules below match it against
// lowercased text), searched in the first kRegexScanLimit bytes.
class pattern {
 public:
  explicit pattern(const char* source) : re_(js_regex::literal(source)) {}
  bool found_in(std::string_view text) const { return re_.search(regex_window(text)); }
  // The leftmost match in the window (offsets valid for `text`, which starts the window).
  std::optional<js_match> find(std::string_view text) const { return re_.find(regex_window(text)); }

 private:
  js_regex re_;
};

// --- OpenClaw failover classifiers (src/agents/failover/message-patterns.ts, 2026.9.6) ---

bool has_tpm_hint(std::string_view lower) {
  static const pattern tpm(R"(\btpm\b)");
  return contains(lower, "tokens per minute") || tpm.found_in(lower);
}

bool is_reasoning_constraint(std::string_view lower) {
  return contains_any(lower, {"reasoning is mandatory", "reasoning is required", "requires reasoning"}) ||
         (contains(lower, "reasoning") && contains(lower, "cannot be disabled"));
}

bool rate_limit_lower(std::string_view lower) {
  static const pattern re(
      R"(rate[_ ]limit|too many requests)"
      R"(|^\s*429\b|\b(?:https?|status(?:[ _-]?code)?|response(?:[ _-]?code)?|http(?:[ _-]?status)?)\b[\s:=#"'(]{0,6}429\b)"
      R"(|["'](?:status|code)["']\s*:\s*429\b)"
      R"(|\b429\b[\s:)\].,-]*(?:rate[_ -]?limit(?:ed|ing)?|too many requests|resource has been exhausted|quota(?:\s+(?:exceeded|exhausted|depleted|reached))?)\b)"
      R"(|too many (?:concurrent )?requests)"
      R"(|\bthrottl(?:ing[_]?exception|ing|ed)\b)"
      R"(|\bconcurrency limit\b.*\b(?:breached|reached)\b)"
      R"(|\bresource[_ -]?exhausted\b|\bquota[_ -]?exceeded\b|\btpm\b)");
  return contains_any(lower, {"model_cooldown", "exceeded your current quota", "usage limit", "tokens per minute",
                              "tokens per day", "请求过于频繁", "调用频率", "频率限制", "配额不足", "配额已用尽",
                              "额度不足", "额度已用尽"}) ||
         re.found_in(lower);
}

bool billing_lower(std::string_view raw, std::string_view lower) {
  static const pattern headings(R"((?:^|\n)##\s+\S[\s\S]*\n##\s+\S)");
  static const pattern re(
      R"(["']?(?:status|code)["']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(?:\s+code)?\s*[:=]?\s*402\b|^\s*402\s+payment)"
      R"(|\b(?:got|returned|received)\s+(?:a\s+)?402\b(?!\s+records\b))"
      R"(|used\s+all\s+available\s+credits|spend(?:ing)?\s+limit|insufficient[_ ]quota)"
      R"(|\b(?:go|free)usagelimiterror\b|insufficient[_ ]balance|\binsufficient\s+\w+\s+balance\b)"
      R"(|requires?\s+more\s+credits|out of extra usage|draw from your extra usage|extra usage is required)"
      R"(|"code"\s*:\s*"invalidsubscription"|\bdoes not have a valid coding\s*plan subscription\b)"
      R"(|"code"\s*:\s*1311\b)"
      R"(|\bcurrent\s+subscription\s+plan\b.*\b(?:does\s+not|doesn't|not)\b.*\binclude\s+access\b)"
      R"(|\bmodel\b.*\bnot\s+available\b.*\bcurrent\s+plan\b)");
  static const pattern head(
      R"(^(?:error[:\s-]+)?billing(?:\s+error)?(?:[:\s-]+|$)|^(?:error[:\s-]+)?(?:credit balance|insufficient credits?|payment required|http\s*402\b))");
  if (lower.empty()) return false;
  if (headings.found_in(raw)) return false;  // a structured document, not an error line
  if (contains_any(lower, {"payment required", "insufficient credits", "available balance", "out of budget",
                           "credit balance", "plans & billing", "insufficient usd or diem balance", "余额不足", "欠费"}) ||
      re.found_in(lower))
    return true;
  // BILLING_ERROR_HEAD_RE runs on the raw text with /i: the lowercased, untrimmed form is equivalent.
  std::string lower_raw(raw);
  for (char& c : lower_raw)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (!head.found_in(lower_raw)) return false;
  return contains_any(lower, {"upgrade", "credits", "payment", "purchase", "subscription", "plan"});
}

// --- OpenClaw isContextOverflowError pieces ---

// looksLikeProviderContextOverflowCandidate: a context/limit-shaped message that is no rate limit.
bool provider_overflow_candidate(std::string_view lower) {
  static const pattern signal(R"(\b(?:context|window|prompt|token|tokens|input|request|model)\b)");
  static const pattern action(R"(\b(?:too\s+(?:large|long|many)|exceed(?:s|ed|ing)?|overflow|limit|maximum|max)\b)");
  return !rate_limit_lower(lower) && signal.found_in(lower) && action.found_in(lower);
}

// PROVIDER_CONTEXT_OVERFLOW_PATTERNS (Bedrock, Vertex, Ollama, Cohere, llama.cpp, generic) and
// the bundled Mistral plugin's matchesContextOverflowError.
bool provider_overflow_pattern(std::string_view lower) {
  static const pattern re(
      R"(\binput token count exceeds the maximum number of input tokens\b)"
      R"(|\binput is too long for this model\b)"
      R"(|\binput exceeds the maximum number of tokens\b)"
      R"(|\bollama error:\s*context length exceeded(?:,\s*too many tokens)?\b)"
      R"(|\btotal tokens?.*exceeds? (?:the )?(?:model(?:'s)? )?(?:max|maximum|limit))"
      R"(|\b(?:(?:request|prompt) \(\d[\d,]*\s*tokens?\) exceeds (?:the )?available context size|context size has been exceeded)\b)"
      R"(|\binput (?:is )?too long for (?:the )?model\b)"
      R"(|\bmistral\b.*(?:input.*too long|token limit.*exceeded))");
  return provider_overflow_candidate(lower) && re.found_in(lower);
}

bool explicit_overflow_phrase(std::string_view lower) {
  return contains_any(lower, {"request_too_large", "context_overflow", "request exceeds the maximum size",
                              "context length exceeded", "maximum context length", "prompt is too long",
                              "prompt too long", "exceeds model context window", "model token limit",
                              "context overflow:", "exceed context limit", "exceeds the model's maximum context",
                              "exceeds the models maximum context", "context_window_exceeded"});
}

bool overflow_combination(std::string_view lower) {
  bool context_window = contains_any(lower, {"context window", "context length", "maximum context length"});
  bool exceed = contains(lower, "exceed");
  return (contains(lower, "invalid_argument") && contains(lower, "maximum number of tokens")) ||
         (contains(lower, "input exceeds") && contains(lower, "maximum number of tokens")) ||
         (context_window && contains_any(lower, {"ran out of room", "ran out of space"})) ||
         (context_window && contains(lower, "request size exceeds")) ||
         (contains(lower, "max_tokens") && exceed && contains(lower, "context")) ||
         (contains(lower, "input length") && exceed && contains(lower, "context")) ||
         (contains(lower, "413") && contains(lower, "too large"));
}

// Phrases OpenClaw builds after the JSON era added to the explicit table.
bool later_explicit_pattern(std::string_view lower) {
  static const pattern re(
      R"(prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?)"
      R"(|input length [\d,]+\s+tokens? exceeds the model limit)"
      R"(|input \([\d,]+\s*tokens?\) is longer than (?:the )?model'?s context length)");
  return re.found_in(lower);
}

bool chinese_overflow_phrase(std::string_view raw) {
  return contains_any(raw, {"上下文过长", "上下文超出", "上下文长度超", "超出最大上下文", "请压缩上下文"});
}

// --- pi-ai 0.73.1 dist/utils/overflow.js, verbatim (each /.../i, on the whole raw text) ---

std::vector<js_regex> compile_all_i(std::initializer_list<const char*> sources) {
  std::vector<js_regex> out;
  for (const char* source : sources) out.push_back(js_regex::literal(source, "i"));
  return out;
}

bool any_matches(const std::vector<js_regex>& patterns, std::string_view text) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const js_regex& re) { return re.search(text); });
}

// OVERFLOW_PATTERNS.
bool pi_overflow_pattern(std::string_view text) {
  static const std::vector<js_regex> patterns = compile_all_i({
      R"(prompt is too long)",                                  // Anthropic token overflow
      R"(request_too_large)",                                   // Anthropic request byte-size overflow (HTTP 413)
      R"(input is too long for requested model)",               // Amazon Bedrock
      R"(exceeds the context window)",                          // OpenAI (Completions & Responses API)
      R"(input token count.*exceeds the maximum)",              // Google (Gemini)
      R"(maximum prompt length is \d+)",                        // xAI (Grok)
      R"(reduce the length of the messages)",                   // Groq
      R"(maximum context length is \d+ tokens)",                // OpenRouter (all backends)
      R"(exceeds the limit of \d+)",                            // GitHub Copilot
      R"(exceeds the available context size)",                  // llama.cpp server
      R"(greater than the context length)",                     // LM Studio
      R"(context window exceeds limit)",                        // MiniMax
      R"(exceeded model token limit)",                          // Kimi For Coding
      R"(too large for model with \d+ maximum context length)", // Mistral
      R"(model_context_window_exceeded)",                       // z.ai finish_reason surfaced as error text
      R"(prompt too long; exceeded (?:max )?context length)",   // Ollama explicit overflow error
      R"(context[_ ]length[_ ]exceeded)",                       // Generic fallback
      R"(too many tokens)",                                     // Generic fallback
      R"(token limit exceeded)",                                // Generic fallback
      R"(^4(?:00|13)\s*(?:status code)?\s*\(no body\))",        // Cerebras: 400/413 with no body
  });
  return any_matches(patterns, text);
}

// NON_OVERFLOW_PATTERNS, checked first, plus OpenClaw's TPM hint ("tpm-rate-limit-hint" of
// @openclaw/ai 2026.9.6): a tokens-per-minute limit is a rate limit, not an overflow.
bool pi_non_overflow_pattern(std::string_view text) {
  static const std::vector<js_regex> patterns = compile_all_i({
      R"(^(Throttling error|Service unavailable):)",  // AWS Bedrock non-overflow errors
      R"(rate limit)",                                 // Generic rate limiting
      R"(too many requests)",                          // Generic HTTP 429 style
      R"(\btpm\b|tokens per minute)",                  // OpenClaw: TPM rate limit
  });
  return any_matches(patterns, text);
}

// Number("1,234".replaceAll(",", "")), floored; nullopt for an empty digit string.
std::optional<double> parse_count(std::string_view digits_and_commas) {
  std::string digits;
  for (char c : digits_and_commas)
    if (c != ',') digits.push_back(c);
  if (digits.empty()) return std::nullopt;
  double v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

std::int64_t to_count(double v) {
  constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max());
  return v >= kMax ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(std::floor(v));
}

double usage_number(const boost::json::object& usage, std::string_view key) {
  return json::get_number(usage, key).value_or(0);
}

}  // namespace

bool is_rate_limit_error_text(std::string_view error_text) {
  return !error_text.empty() && rate_limit_lower(ascii_lower(ascii_trim(error_text)));
}

bool is_billing_error_text(std::string_view error_text) {
  return billing_lower(error_text, ascii_lower(ascii_trim(error_text)));
}

bool is_context_overflow_error(std::string_view error_text) {
  if (error_text.empty()) return false;
  std::string lower = ascii_lower(ascii_trim(error_text));
  if (has_tpm_hint(lower) || is_reasoning_constraint(lower)) return false;
  return explicit_overflow_phrase(lower) || overflow_combination(lower) || later_explicit_pattern(lower) ||
         chinese_overflow_phrase(error_text) || provider_overflow_pattern(lower);
}

bool is_likely_context_overflow_error(std::string_view error_text) {
  static const pattern too_small(R"(context window.*(?:too small|minimum is))");
  static const pattern rate_limit_hint(
      R"(rate limit|too many requests|requests per (?:minute|hour|day)|quota|throttl|429\b|tokens per day)");
  static const pattern overflow_hint(
      R"(context.*overflow|context window.*(?:too (?:large|long)|exceed|over|limit|max(?:imum)?|requested|sent|tokens))"
      R"(|prompt.*(?:too (?:large|long)|exceed|over|limit|max(?:imum)?))"
      R"(|(?:request|input).*(?:context|window|length|token).*(?:too (?:large|long)|exceed|over|limit|max(?:imum)?))");
  if (error_text.empty()) return false;
  std::string lower = ascii_lower(ascii_trim(error_text));
  std::string raw_lower = ascii_lower(error_text);
  if (has_tpm_hint(lower) || is_reasoning_constraint(lower)) return false;
  if (billing_lower(error_text, lower) || too_small.found_in(raw_lower) || rate_limit_lower(lower)) return false;
  if (is_context_overflow_error(error_text)) return true;
  if (rate_limit_hint.found_in(raw_lower)) return false;
  return overflow_hint.found_in(raw_lower);
}

bool matches_pi_overflow_pattern(std::string_view error_text) {
  return !pi_non_overflow_pattern(error_text) && pi_overflow_pattern(error_text);
}

bool is_context_overflow(const boost::json::object& assistant_message, std::int64_t context_window) {
  auto stop = json::get_string(assistant_message, "stopReason").value_or("");
  auto error = json::get_string(assistant_message, "errorMessage");
  if (stop == "error" && error && !error->empty() && matches_pi_overflow_pattern(*error)) return true;
  const auto* usage = json::get_object(assistant_message, "usage");
  if (context_window <= 0 || usage == nullptr) return false;
  double input = usage_number(*usage, "input") + usage_number(*usage, "cacheRead");
  auto window = static_cast<double>(context_window);
  if (stop == "stop" && input > window) return true;
  return stop == "length" && usage_number(*usage, "output") == 0 && input >= window * 0.99;
}

std::optional<std::int64_t> extract_observed_overflow_token_count(std::string_view error_text) {
  static const pattern sums[] = {
      pattern(R"(input length(?:\s+and\s+max_tokens)?\s+exceed\s+context(?:\s+limit|\s+window)?\s*\(i\.e\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*[\d,]+\))"),
      pattern(R"(input length\s+and\s+`max_tokens`\s+exceed\s+context\s+limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*[\d,]+)"),
  };
  static const pattern counts[] = {
      pattern(R"(prompt is too long:\s*([\d,]+)\s+tokens\s*>\s*[\d,]+\s+maximum)"),
      pattern(R"(prompt is too long:\s*([\d,]+)\s*,\s*model maximum context length\s*:\s*[\d,]+)"),
      pattern(R"(requested\s+([\d,]+)\s+tokens)"),
      pattern(R"(token limit\s*:\s*[\d,]+\s*\(requested\s*:\s*([\d,]+)\))"),
      pattern(R"(resulted in\s+([\d,]+)\s+tokens)"),
  };
  if (error_text.empty()) return std::nullopt;
  std::string lower = ascii_lower(error_text);
  std::string_view text(lower);
  for (const auto& p : sums) {
    auto m = p.find(text);
    if (!m) continue;
    auto left = parse_count(m->group(text, 1).value_or(""));
    auto right = parse_count(m->group(text, 2).value_or(""));
    if (left && right && *left > 0 && *right >= 0) return to_count(*left + *right);
  }
  for (const auto& p : counts) {
    auto m = p.find(text);
    if (!m) continue;
    auto count = parse_count(m->group(text, 1).value_or(""));
    if (count && *count > 0) return to_count(*count);
  }
  return std::nullopt;
}

}  // namespace sessionrt::actors
