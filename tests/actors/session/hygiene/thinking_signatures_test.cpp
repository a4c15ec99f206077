// Thinking-signature cleanup and dropped thinking blocks.
#include <catch2/catch.hpp>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "actors/session/hygiene/thinking_signatures.hpp"
#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

using namespace sessionrt::actors::hygiene;
using namespace sessionrt::testing::hygiene_fixture;
using V = std::vector<std::string>;

namespace {
const transcript_policy kAnthropic = resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5");
}

TEST_CASE("signatures: thinking made before the latest compaction is stripped for Anthropic", "[hygiene][signatures]") {
  // e0 user, e1 assistant (kept by the compaction: firstKeptEntryId e0), e2 compaction, e3 user, e4 assistant.
  auto ctx = context_of({user("a"), assistant(thinking("old", "c2lnLW9sZA==") + "," + text("A1")),
                         R"({"type":"compaction","summary":"S","firstKeptEntryId":"e0","tokensBefore":100})", user("b"),
                         assistant(thinking("new", "c2lnLW5ldw==") + "," + text("A2")), user("c")});
  REQUIRE(roles(ctx) == V{"compactionSummary", "user", "assistant", "user", "assistant", "user"});
  auto rep = sanitize_for_provider(ctx, kAnthropic);
  CHECK(rep.signatures_stripped == 1);
  // compaction summary + user a merged (Anthropic merges consecutive user turns).
  REQUIRE(roles(ctx) == V{"user", "assistant", "user", "assistant", "user"});
  CHECK(block_types(ctx[1]) == V{"text"});
  CHECK(block_types(ctx[3]) == V{"thinking", "text"});
}

TEST_CASE("signatures: blank or missing signatures are stripped except on the latest assistant", "[hygiene][signatures]") {
  auto ctx = context_of({user("a"), assistant(thinking("x", "  ") + "," + text("A1")), user("b"),
                         assistant(R"({"type":"thinking","thinking":"y"})" "," + text("A2")), user("c"),
                         assistant(thinking("z", "") + "," + text("A3")), user("d")});
  auto rep = sanitize_for_provider(ctx, kAnthropic);
  CHECK(rep.signatures_stripped == 2);
  CHECK(block_types(ctx[1]) == V{"text"});
  CHECK(block_types(ctx[3]) == V{"text"});
  CHECK(block_types(ctx[5]) == V{"thinking", "text"});  // the latest assistant is never modified
}

TEST_CASE("signatures: other policies leave signatures alone", "[hygiene][signatures]") {
  auto ctx = context_of({user("a"), assistant(thinking("x", "") + "," + text("A1")), user("b")});
  sanitize_for_provider(ctx, resolve_transcript_policy("openai", "openai-responses", "gpt-5"));
  CHECK(block_types(ctx[1]) == V{"thinking", "text"});
}

TEST_CASE("signatures: Gemini drops thought signatures that are not base64", "[hygiene][signatures]") {
  auto ctx = context_of({user("a"),
                         assistant(thinking("x", "not base64!") + "," + thinking("y", "c2lnbmVk") + "," +
                                   R"({"type":"toolCall","id":"c1","name":"bash","arguments":{},"thoughtSignature":"%%"})",
                                   "toolUse"),
                         result("c1"), user("b")});
  auto rep = sanitize_for_provider(ctx, resolve_transcript_policy("google", "google-generative-ai", "gemini-2.5-pro"));
  CHECK(rep.thought_signatures_dropped == 2);
  const auto& blocks = *content_array(ctx[1]);
  CHECK_FALSE(blocks[0].as_object().contains("thinkingSignature"));
  CHECK(blocks[1].as_object().at("thinkingSignature") == "c2lnbmVk");
  CHECK_FALSE(blocks[2].as_object().contains("thoughtSignature"));
}

TEST_CASE("signatures: pre-4 Claude models drop thinking blocks, completions drop reasoning from history",
          "[hygiene][signatures]") {
  auto ctx = context_of({user("a"), assistant(thinking("x", "c2ln") + "," + text("A1")), user("b"),
                         assistant(thinking("y", "c2ln") + "," + text("A2")), user("c")});
  auto old = ctx;
  auto rep = sanitize_for_provider(ctx, resolve_transcript_policy("anthropic", "anthropic-messages", "claude-3-7-sonnet"));
  CHECK(rep.thinking_blocks_dropped == 2);
  CHECK(block_types(ctx[1]) == V{"text"});
  CHECK(block_types(ctx[3]) == V{"text"});
  rep = sanitize_for_provider(old, resolve_transcript_policy("deepseek", "openai-completions", "deepseek-chat"));
  CHECK(rep.thinking_blocks_dropped == 2);
}
