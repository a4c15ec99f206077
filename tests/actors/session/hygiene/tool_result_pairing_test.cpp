// Tool-result pairing repair [R§8.3] and turn validation, and the four lessons of the issue.
#include <catch2/catch.hpp>

#include <set>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/tool_result_pairing.hpp"
#include "actors/session/hygiene/thinking_signatures.hpp"
#include "actors/session/hygiene/turn_validation.hpp"
#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

using namespace sessionrt::actors::hygiene;
using namespace sessionrt::testing::hygiene_fixture;
using V = std::vector<std::string>;

namespace {
const transcript_policy kAnthropic = resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5");
const transcript_policy kGoogle = resolve_transcript_policy("google", "google-generative-ai", "gemini-2.5-pro");
const transcript_policy kResponses = resolve_transcript_policy("openai", "openai-responses", "gpt-5");
const transcript_policy kOther = resolve_transcript_policy("ollama", "", "llama3");

std::string synthetic(const std::string& id) {
  return R"({"role":"toolResult","toolCallId":")" + id +
         R"(","toolName":"bash","content":[{"type":"text","text":"aborted"}],"details":{"openclawSyntheticMissingToolResult":true},"isError":true})";
}
}  // namespace

TEST_CASE("pairing: a missing result gets a synthetic error result, in call order", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(call("t1") + "," + call("t2", "read"), "toolUse"), result("t2"), user("next")});
  hygiene_options opt;
  opt.now_ms = 42;
  auto rep = sanitize_for_provider(ctx, kAnthropic, opt);
  CHECK(rep.synthetic_results_inserted == 1);
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "toolResult", "user"});
  const auto& syn = ctx[2].as_object();
  CHECK(syn.at("toolCallId") == "t1");
  CHECK(syn.at("toolName") == "bash");
  CHECK(syn.at("isError") == true);
  CHECK(syn.at("timestamp") == 42);
  CHECK(texts(ctx[2]) == std::string(kMissingToolResultText));
  CHECK(*tool_result_id(ctx[3]) == "t2");
}

TEST_CASE("pairing: OpenAI Responses synthesizes 'aborted' and drops an errored assistant's results", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(call("c1"), "toolUse"), user("next"),
                         assistant(text("partial") + "," + call("c2"), "error"), result("c2"), user("again")});
  auto rep = sanitize_for_provider(ctx, kResponses);
  CHECK(rep.synthetic_results_inserted == 1);
  CHECK(rep.errored_results_dropped == 1);
  CHECK(rep.unanswered_calls_removed == 1);
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "user", "assistant", "user"});
  CHECK(texts(ctx[2]) == "aborted");
  CHECK(block_types(ctx[4]) == V{"text"});
}

TEST_CASE("pairing: orphan and duplicate results are dropped, displaced results are moved", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), result("ghost"), assistant(call("t1") + "," + call("t2"), "toolUse"), result("t1"),
                         result("t1", "dup"), user("meanwhile"), assistant(text("thinking aloud")), result("t2", "late"),
                         user("next")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.orphan_results_dropped == 1);
  CHECK(rep.duplicate_results_dropped == 1);
  CHECK(rep.displaced_results_moved == 0);  // t2 is still inside t1's span (no later assistant with calls)
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "toolResult", "user", "assistant", "user"});
  CHECK(texts(ctx[2]) == "ok");
  CHECK(texts(ctx[3]) == "late");
}

TEST_CASE("pairing: a result displaced past the next tool-calling assistant is moved back", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(call("t1"), "toolUse"), assistant(call("t2"), "toolUse"), result("t2"),
                         result("t1"), user("next")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.displaced_results_moved == 1);
  CHECK(rep.synthetic_results_inserted == 0);
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "assistant", "toolResult", "user"});
  CHECK(*tool_result_id(ctx[2]) == "t1");
  CHECK(*tool_result_id(ctx[4]) == "t2");
}

TEST_CASE("pairing: a legacy result without an id is adopted by the one call with its tool name", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(call("t1", "bash") + "," + call("t2", "read"), "toolUse"),
                         R"({"role":"toolResult","toolName":"read","content":[{"type":"text","text":"file"}]})", result("t1"),
                         user("next")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.synthetic_results_inserted == 0);
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "toolResult", "user"});
  CHECK(*tool_result_id(ctx[3]) == "t2");
  CHECK(texts(ctx[3]) == "file");
}

TEST_CASE("pairing: without synthetic results allowed, unanswered calls are removed", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(text("let me") + "," + call("t1"), "toolUse"), user("next")});
  auto rep = sanitize_for_provider(ctx, kOther);
  CHECK(rep.unanswered_calls_removed == 1);
  CHECK(rep.synthetic_results_inserted == 0);
  REQUIRE(roles(ctx) == V{"user", "assistant", "user"});
  CHECK(block_types(ctx[1]) == V{"text"});
}

TEST_CASE("pairing: toolResult details are stripped", "[hygiene][pairing]") {
  auto ctx = context_of({user("go"), assistant(call("t1"), "toolUse"),
                         R"({"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"r"}],"details":{"exitCode":0}})",
                         user("next")});
  auto rep = sanitize_for_provider(ctx, kOther);
  CHECK(rep.result_details_stripped == 1);
  CHECK_FALSE(ctx[2].as_object().contains("details"));
  CHECK_FALSE(rep.changed());
}

TEST_CASE("turns: Google turn ordering bootstraps an assistant-first context", "[hygiene][turns]") {
  auto ctx = context_of({assistant(text("Hello, I am your agent.")), user("hi")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.bootstrap_inserted == 1);
  REQUIRE(roles(ctx) == V{"user", "assistant", "user"});
  CHECK(ctx[0].as_object().at("content") == "(session bootstrap)");
  // Anthropic and Responses rows do not.
  auto other = context_of({assistant(text("Hello")), user("hi")});
  CHECK(sanitize_for_provider(other, kResponses).bootstrap_inserted == 0);
}

TEST_CASE("turns: Gemini merges consecutive assistant turns", "[hygiene][turns]") {
  auto ctx = context_of({user("a"), assistant(text("one")), assistant(text("two")), user("b")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.assistant_turns_merged == 1);
  REQUIRE(roles(ctx) == V{"user", "assistant", "user"});
  CHECK(texts(ctx[1]) == "one|two");
}

TEST_CASE("turns: Anthropic merges consecutive user turns (string content becomes a text block)", "[hygiene][turns]") {
  auto ctx = context_of({user("a"), user_blocks(text("b") + "," + image("UklGRgAAAABXRUJQ", "image/webp")), user("c"),
                         assistant(text("x")), user("d")});
  auto rep = sanitize_for_provider(ctx, kAnthropic);
  CHECK(rep.user_turns_merged == 2);
  REQUIRE(roles(ctx) == V{"user", "assistant", "user"});
  CHECK(block_types(ctx[0]) == V{"text", "text", "image", "text"});
  CHECK(texts(ctx[0]) == "a|b|c");
  CHECK(ctx[0].as_object().at("timestamp") == kBaseMs + 2000);  // current ?? previous
}

TEST_CASE("turns: Anthropic strips dangling tool uses", "[hygiene][turns]") {
  boost::json::array msgs{j(user("a")), j(assistant(text("x") + "," + call("t1") + "," + call("t2"), "toolUse")), j(result("t2")),
                          j(user("b"))};
  hygiene_report rep;
  strip_dangling_tool_uses(msgs, rep);
  CHECK(rep.dangling_tool_uses_dropped == 1);
  CHECK(block_types(msgs[1]) == V{"text", "toolCall"});
}

// --- the four lessons of the reference's bug tracker (issue 13) ---

TEST_CASE("lesson: no synthetic tool result for a tool call another rule dropped", "[hygiene][lessons]") {
  // The call has no input (sanitizeToolCallInputs drops it); OpenClaw #8264 inserted a result
  // for it anyway and Anthropic refused every later turn.
  auto ctx = context_of({user("go"),
                         assistant(text("trying") + "," + R"({"type":"toolCall","id":"toolu_9","name":"bash"})", "toolUse"),
                         user("and?")});
  auto rep = sanitize_for_provider(ctx, kAnthropic);
  CHECK(rep.tool_calls_dropped == 1);
  CHECK(rep.synthetic_results_inserted == 0);
  for (const auto& m : ctx) CHECK(role_of(m) != "toolResult");
  CHECK(block_types(ctx[1]) == V{"text"});
}

TEST_CASE("lesson: a real result that arrives later replaces the synthetic one", "[hygiene][lessons]") {
  // The on-disk repair inserted a synthetic "aborted" result; the real one was written later.
  auto ctx = context_of({user("go"), assistant(call("t1"), "toolUse"), synthetic("t1"), user("hello?"),
                         assistant(text("waiting")), result("t1", "real output"), user("next")});
  auto rep = sanitize_for_provider(ctx, kGoogle);
  CHECK(rep.synthetic_results_replaced == 1);
  CHECK(rep.synthetic_results_inserted == 0);
  REQUIRE(roles(ctx) == V{"user", "assistant", "toolResult", "user", "assistant", "user"});
  CHECK(texts(ctx[2]) == "real output");
  // Even when the real one comes after the next tool-calling assistant.
  auto later = context_of({user("go"), assistant(call("t1"), "toolUse"), synthetic("t1"), assistant(call("t2"), "toolUse"),
                           result("t2"), result("t1", "real output"), user("next")});
  rep = sanitize_for_provider(later, kAnthropic);
  CHECK(rep.synthetic_results_replaced == 1);
  REQUIRE(roles(later) == V{"user", "assistant", "toolResult", "assistant", "toolResult", "user"});
  CHECK(texts(later[2]) == "real output");
}

TEST_CASE("lesson: repeated provider tool-call ids map to distinct ids, one per occurrence", "[hygiene][lessons]") {
  // Some providers number calls per turn: every turn's first call is "call_0" (OpenClaw #109443).
  std::vector<std::string> items{user("go")};
  for (int turn = 0; turn < 3; ++turn) {
    items.push_back(assistant(call("call_0") + "," + call("call_1"), "toolUse"));
    items.push_back(result("call_0", "r0-" + std::to_string(turn)));
    items.push_back(result("call_1", "r1-" + std::to_string(turn)));
  }
  items.push_back(user("done?"));
  for (const auto* policy : {&kAnthropic, &kGoogle}) {
    auto ctx = context_of(items);
    auto rep = sanitize_for_provider(ctx, *policy);
    CHECK(rep.synthetic_results_inserted == 0);
    CHECK(rep.duplicate_results_dropped == 0);
    std::set<std::string> ids;
    for (int turn = 0; turn < 3; ++turn) {
      const auto& a = ctx[1 + turn * 3];
      const auto& calls = *content_array(a);
      for (int k = 0; k < 2; ++k) {
        const std::string id(calls[k].as_object().at("id").as_string());
        ids.insert(id);
        CHECK(*tool_result_id(ctx[2 + turn * 3 + k]) == id);
        CHECK(texts(ctx[2 + turn * 3 + k]) == "r" + std::to_string(k) + "-" + std::to_string(turn));
      }
    }
    CHECK(ids.size() == 6);
  }
}

TEST_CASE("lesson: signature stripping never leaves an empty assistant turn", "[hygiene][lessons]") {
  // Thinking-only assistants before the compaction, and one with a blank signature.
  auto ctx = context_of({user("a"), assistant(thinking("only thoughts", "c2ln")), user("b"),
                         assistant(thinking("more", "  "), "stop"),
                         R"({"type":"compaction","summary":"S","firstKeptEntryId":"e0","tokensBefore":10})", user("c"),
                         assistant(text("latest")), user("d")});
  auto rep = sanitize_for_provider(ctx, kAnthropic);
  CHECK(rep.signatures_stripped == 2);
  CHECK(rep.reasoning_placeholders == 2);
  for (const auto& m : ctx) {
    if (role_of(m) != "assistant") continue;
    CHECK_FALSE(has_no_content(m));
  }
  REQUIRE(roles(ctx) == V{"user", "assistant", "user", "assistant", "user", "assistant", "user"});
  CHECK(texts(ctx[1]) == std::string(kOmittedReasoningText));
}
