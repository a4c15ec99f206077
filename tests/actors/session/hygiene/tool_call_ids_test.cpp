// Tool-call id sanitizing strict / strict9 and the occurrence-aware rewrite [R§8.4].
#include <catch2/catch.hpp>

#include <set>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/tool_call_ids.hpp"
#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

using namespace sessionrt::actors::hygiene;
using namespace sessionrt::testing::hygiene_fixture;
using V = std::vector<std::string>;

TEST_CASE("ids: sanitize_tool_call_id strict and strict9", "[hygiene][ids]") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sanitize_tool_call_id("call_ab-12|fc_9", tool_call_id_mode::strict) == "callab12fc9");
  CHECK(sanitize_tool_call_id("functions.read_file:3", tool_call_id_mode::strict) == "functions.read_file:3");
  CHECK(sanitize_tool_call_id("---", tool_call_id_mode::strict) == "sanitizedtoolid");
  CHECK(sanitize_tool_call_id(std::nullopt, tool_call_id_mode::strict) == "defaulttoolid");
  CHECK(sanitize_tool_call_id("toolu_01ABCDEFGH", tool_call_id_mode::strict9) == "toolu01AB");
  CHECK(sanitize_tool_call_id("a-b", tool_call_id_mode::strict9) == sha256_hex("ab").substr(0, 9));
  CHECK(sanitize_tool_call_id("--", tool_call_id_mode::strict9) == sha256_hex("sanitized").substr(0, 9));
  CHECK(sanitize_tool_call_id(std::nullopt, tool_call_id_mode::strict9) == "defaultid");
}

TEST_CASE("ids: strict rewrite keeps native toolu_ ids for Anthropic and rewrites the rest", "[hygiene][ids]") {
  auto ctx = context_of({user("a"), assistant(call("toolu_01A") + "," + call("call-x.1"), "toolUse"), result("toolu_01A"),
                         result("call-x.1"), user("b")});
  auto rep = sanitize_for_provider(ctx, resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5"));
  CHECK(rep.tool_call_ids_rewritten == 2);  // the call and the result of call-x.1
  const auto& calls = *content_array(ctx[1]);
  CHECK(calls[0].as_object().at("id").as_string() == "toolu_01A");
  CHECK(calls[1].as_object().at("id").as_string() == "callx1");
  CHECK(*tool_result_id(ctx[2]) == "toolu_01A");
  CHECK(*tool_result_id(ctx[3]) == "callx1");
}

TEST_CASE("ids: strict9 (Mistral) gives 9 alphanumerics, unique, results follow their calls", "[hygiene][ids]") {
  auto ctx = context_of({user("a"), assistant(call("abc") + "," + call("a-b-c") + "," + call("toolu_01XYZWVUTS"), "toolUse"),
                         result("abc"), result("a-b-c"), result("toolu_01XYZWVUTS"), user("b")});
  sanitize_for_provider(ctx, resolve_transcript_policy("mistral", "", "mistral-large-latest"));
  std::set<std::string> ids;
  const auto& calls = *content_array(ctx[1]);
  for (std::size_t k = 0; k < 3; ++k) {
    const std::string id(calls[k].as_object().at("id").as_string());
    CHECK(is_valid_tool_call_id(id, tool_call_id_mode::strict9));
    ids.insert(id);
    CHECK(*tool_result_id(ctx[2 + k]) == id);
  }
  CHECK(ids.size() == 3);
  // "abc" and "a-b-c" sanitize alike: the second gets sha256(id:0)[0:9].
  CHECK(calls[0].as_object().at("id").as_string() == sha256_hex("abc").substr(0, 9));
  CHECK(calls[1].as_object().at("id").as_string() == sha256_hex("a-b-c:0").substr(0, 9));
}

TEST_CASE("ids: every id field of a tool result is rewritten to the same value", "[hygiene][ids]") {
  auto ctx = context_of({user("a"), assistant(call("x.1"), "toolUse"),
                         R"({"role":"toolResult","toolCallId":"x.1","tool_use_id":"x.1","toolName":"bash","content":[{"type":"text","text":"r"}]})",
                         user("b")});
  sanitize_for_provider(ctx, resolve_transcript_policy("google", "", "gemini-2.5-pro"));
  const auto& r = ctx[2].as_object();
  CHECK(r.at("toolCallId") == "x1");
  CHECK(r.at("tool_use_id") == "x1");
}

TEST_CASE("ids: a used strict id gets the sha256 suffix within 40 characters", "[hygiene][ids]") {
  const std::string long_id(50, 'a');
  auto ctx = context_of({user("a"), assistant(call(long_id) + "," + call(long_id + "-"), "toolUse"), result(long_id),
                         result(long_id + "-"), user("b")});
  sanitize_for_provider(ctx, resolve_transcript_policy("google", "", "gemini-2.5-pro"));
  const auto& calls = *content_array(ctx[1]);
  CHECK(calls[0].as_object().at("id").as_string() == std::string(40, 'a'));
  CHECK(calls[1].as_object().at("id").as_string() == std::string(32, 'a') + sha256_hex(long_id + "-").substr(0, 8));
  CHECK(*tool_result_id(ctx[3]) == std::string(32, 'a') + sha256_hex(long_id + "-").substr(0, 8));
}

TEST_CASE("ids: OpenAI Responses ids are never rewritten", "[hygiene][ids]") {
  auto ctx = context_of({user("a"), assistant(call("call_1|fc_1"), "toolUse"), result("call_1|fc_1"), user("b")});
  auto rep = sanitize_for_provider(ctx, resolve_transcript_policy("openai", "openai-responses", "gpt-5"));
  CHECK(rep.tool_call_ids_rewritten == 0);
  CHECK((*content_array(ctx[1]))[0].as_object().at("id").as_string() == "call_1|fc_1");
}
