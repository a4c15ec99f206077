// Token estimates [R§10]. Expected numbers marked "node:" were produced by running the
// installed pi-coding-agent 0.73.1 `estimateTokens` / `estimateContextTokens` under node 20
// on the same messages, written in JS with the fields the builders below produce.
#include <catch2/catch.hpp>

#include "actors/session/token_estimate.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
constexpr std::int64_t kT0 = 1767225600000;

boost::json::object tool_call(std::string_view id, std::string_view name, boost::json::object args) {
  return {{"type", "toolCall"}, {"id", id}, {"name", name}, {"arguments", std::move(args)}};
}

boost::json::object image_block() { return {{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}}; }

boost::json::object assistant_with_usage(std::string_view text, std::int64_t input, std::int64_t output,
                                         std::string stop = "stop") {
  assistant_fields a;
  a.content = {text_block(text)};
  a.model = "m";
  a.usage.input = input;
  a.usage.output = output;
  a.stop_reason = std::move(stop);
  a.timestamp_ms = kT0;
  return assistant_message(a);
}
}  // namespace

TEST_CASE("utf16_length counts JavaScript string length from UTF-8") {
  CHECK(utf16_length("") == 0);
  CHECK(utf16_length("abc") == 3);
  CHECK(utf16_length("\xC3\xA9") == 1);                      // é: 2 bytes, 1 unit
  CHECK(utf16_length("\xE6\x97\xA5\xE6\x9C\xAC") == 2);      // 日本: 6 bytes, 2 units
  CHECK(utf16_length("\xF0\x9F\x98\x80") == 2);              // 😀: 4 bytes, a surrogate pair
}

TEST_CASE("estimate_tokens: user text counts UTF-16 units, not bytes") {
  // node: estimateTokens(user("日本語テキスト")) == 2 (7 units; 21 bytes would give 6)
  CHECK(estimate_tokens(user_message("日本語テキスト", kT0)) == 2);
  // node: estimateTokens(user("ab😀😀")) == 2 (6 units; 10 bytes would give 3)
  CHECK(estimate_tokens(user_message("ab😀😀", kT0)) == 2);
  CHECK(estimate_tokens(user_message("hello world", kT0)) == 3);  // ceil(11/4)
}

TEST_CASE("estimate_tokens: an image block counts 4800 chars in user, toolResult and custom content") {
  // node: estimateTokens(toolResult([text("abc"), image])) == 1201 == ceil((3+4800)/4)
  CHECK(estimate_tokens(tool_result_message("t1", "read", {text_block("abc"), image_block()}, false, kT0)) == 1201);
  // [R§10] / SPEC §4: user images count too (pi 0.73.1 would count only the text here).
  CHECK(estimate_tokens(user_message(boost::json::array{text_block("abc"), image_block()}, kT0)) == 1201);
  boost::json::object custom{{"role", "custom"},
                             {"customType", "n"},
                             {"content", boost::json::array{image_block()}},
                             {"display", false},
                             {"timestamp", kT0}};
  CHECK(estimate_tokens(custom) == 1200);
}

TEST_CASE("estimate_tokens: assistant counts text, thinking, tool name and JSON.stringify(arguments)") {
  assistant_fields a;
  a.model = "m";
  a.timestamp_ms = kT0;
  a.content = {boost::json::object{{"type", "thinking"}, {"thinking", "Use ls."}}, text_block("Listing ✓"),
               tool_call("t1", "exec",
                         {{"command", "ls /tmp"},
                          {"2", "b"},
                          {"1", "a"},
                          {"nested", boost::json::object{{"k", boost::json::array{1, 2.5, "é"}}}}})};
  // node: 21 = ceil((7 + 9 + 4 + 64) / 4)
  CHECK(estimate_tokens(assistant_message(a)) == 21);
}

TEST_CASE("estimate_tokens: custom, bashExecution and summaries") {
  boost::json::object custom{
      {"role", "custom"}, {"customType", "n"}, {"content", "hidden note"}, {"display", false}, {"timestamp", kT0}};
  CHECK(estimate_tokens(custom) == 3);  // node: 3
  boost::json::object bash{{"role", "bashExecution"}, {"command", "git status"}, {"output", "nothing to commit"},
                           {"exitCode", 0},           {"cancelled", false},      {"truncated", false},
                           {"timestamp", kT0}};
  CHECK(estimate_tokens(bash) == 7);  // node: 7 = ceil((10 + 17) / 4)
  boost::json::object summary{
      {"role", "compactionSummary"}, {"summary", "## Goal\nShip it"}, {"tokensBefore", 5}, {"timestamp", kT0}};
  CHECK(estimate_tokens(summary) == 4);  // node: 4
  boost::json::object branch{{"role", "branchSummary"}, {"summary", "12345"}, {"fromId", "x"}, {"timestamp", kT0}};
  CHECK(estimate_tokens(branch) == 2);
  CHECK(estimate_tokens(boost::json::object{{"role", "weird"}, {"content", "abcdefgh"}}) == 0);
}

TEST_CASE("calculate_context_tokens prefers contextUsage, then totalTokens, then the sum") {
  auto usage = usage_object({.input = 1200, .output = 90});
  CHECK(calculate_context_tokens(usage) == 1290);
  usage["totalTokens"] = 0;
  usage["cacheRead"] = 10;
  CHECK(calculate_context_tokens(usage) == 1300);  // 0 is falsy: input+output+cacheRead+cacheWrite
  usage["contextUsage"] = boost::json::object{{"state", "available"}, {"promptTokens", 700}, {"totalTokens", 777}};
  CHECK(calculate_context_tokens(usage) == 777);
  usage["contextUsage"] = boost::json::object{{"state", "unavailable"}};
  CHECK(calculate_context_tokens(usage) == 1300);
}

TEST_CASE("prompt_tokens_of_usage is input + cacheRead + cacheWrite") {
  auto usage = usage_object({.input = 100, .output = 50, .cache_read = 1000, .cache_write = 7});
  CHECK(prompt_tokens_of_usage(usage) == 1107);
}

TEST_CASE("estimate_context_tokens: last valid usage plus later estimates, aborted usage ignored") {
  std::vector<boost::json::object> messages{user_message("hello", kT0), assistant_with_usage("hi", 1200, 90),
                                            user_message(std::string(41, 'x'), kT0),
                                            assistant_with_usage("x", 5000, 5, "aborted")};
  auto est = estimate_context_tokens(messages);
  // node: {"tokens":1302,"usageTokens":1290,"trailingTokens":12,"lastUsageIndex":1}
  CHECK(est.tokens == 1302);
  CHECK(est.usage_tokens == 1290);
  CHECK(est.trailing_tokens == 12);
  REQUIRE(est.last_usage_index);
  CHECK(*est.last_usage_index == 1);

  std::vector<boost::json::object> no_usage{user_message(std::string(41, 'x'), kT0), user_message("abcd", kT0)};
  auto sum = estimate_context_tokens(no_usage);
  // node: {"tokens":12,"usageTokens":0,"trailingTokens":12,"lastUsageIndex":null}
  CHECK(sum.tokens == 12);
  CHECK_FALSE(sum.last_usage_index);
}
