// plainly_clean() promises that the pipeline changes nothing: checked on random contexts
// biased towards plain chats (with the perturbations that make a rule act), for every
// provider family; the test also checks it is not vacuous (many contexts judged clean, many
// perturbed ones not).
#include <catch2/catch.hpp>

#include <random>

#include "actors/session/hygiene/clean_check.hpp"
#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "messages/json_writer.hpp"
#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

using namespace sessionrt::actors::hygiene;
using namespace sessionrt::testing::hygiene_fixture;

namespace {

std::string plain_assistant(const std::string& text, const std::string& stop = "stop",
                            const std::string& usage = R"({"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15})") {
  return R"({"role":"assistant","content":[{"type":"text","text":")" + text + R"("}],"api":"sim","provider":"sessionrt","model":"sim-1","usage":)" +
         usage + R"(,"stopReason":")" + stop + R"("})";
}

struct chat_generator {
  std::mt19937_64 rng;
  explicit chat_generator(std::uint64_t seed) : rng(seed) {}
  int pick(int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }

  std::string user_turn() {
    if (chance(3)) return user("  ");
    if (chance(3)) return user_blocks(text(""));
    if (chance(3)) return user_blocks(text("look") + "," + image(png_base64(4, 4)));
    if (chance(3)) return R"({"role":"user","content":"hi","inputProvenance":{"kind":"inter_session"}})";
    if (chance(20)) return user_blocks(text("question " + std::to_string(pick(100))));
    return user("question " + std::to_string(pick(100)));
  }
  std::string assistant_turn() {
    if (chance(3)) return plain_assistant("NO_REPLY");
    if (chance(3)) return plain_assistant(" ");
    if (chance(3)) return plain_assistant("partial", "error");
    if (chance(3)) return plain_assistant("cut", "length");
    if (chance(3)) return plain_assistant("zero", "stop", R"({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0})");
    if (chance(3))
      return R"({"role":"assistant","content":[{"type":"text","text":"m"}],"provider":"openclaw","model":"delivery-mirror","stopReason":"stop","usage":{"input":1}})";
    if (chance(3)) return assistant(thinking("hmm", "c2ln") + "," + text("answer"));
    if (chance(3)) return assistant(call("call_1"), "toolUse");
    return plain_assistant("answer " + std::to_string(pick(100)));
  }
  boost::json::array context() {
    boost::json::array out;
    const int n = 1 + 2 * pick(8);
    bool want_user = true;
    for (int i = 0; i < n; ++i) {
      std::string m = want_user ? user_turn() : assistant_turn();
      if (chance(3)) want_user = !want_user;  // a break in alternation now and then
      auto v = j(m);
      v.as_object()["timestamp"] = 1700000000000 + i * 1000;
      out.push_back(std::move(v));
      want_user = !want_user;
    }
    return out;
  }
};

}  // namespace

TEST_CASE("clean_check: a context judged plainly clean comes out of the pipeline unchanged, for every provider",
          "[hygiene][property]") {
  const std::vector<transcript_policy> policies = {
      resolve_transcript_policy("openai", "openai-responses", "gpt-5"),
      resolve_transcript_policy("deepseek", "openai-completions", "deepseek-chat"),
      resolve_transcript_policy("google", "google-generative-ai", "gemini-2.5-pro"),
      resolve_transcript_policy("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
      resolve_transcript_policy("amazon-bedrock", "bedrock-converse-stream", "anthropic.claude-3-5-sonnet-20240620-v1:0"),
      resolve_transcript_policy("mistral", "", "mistral-large-latest"),
      resolve_transcript_policy("openrouter", "openai-completions", "mistralai/mistral-large"),
      resolve_transcript_policy("ollama", "", "llama3"),
      resolve_transcript_policy("", "", ""),
  };
  const std::uint64_t seed = 7;
  chat_generator gen(seed);
  int clean = 0, unclean = 0;
  for (int c = 0; c < 600; ++c) {
    const auto input = gen.context();
    if (!plainly_clean(input)) {
      ++unclean;
      continue;
    }
    ++clean;
    const std::string before = sessionrt::json::to_compact(input);
    for (const auto& p : policies) {
      auto out = input;
      const auto report = sanitize_for_provider(out, p);
      INFO("seed " << seed << ", case " << c << ", policy " << policy_family_name(p.family) << ": " << before);
      CHECK_FALSE(report.changed());
      CHECK(sessionrt::json::to_compact(out) == before);
    }
  }
  CHECK(clean > 100);
  CHECK(unclean > 100);
}

TEST_CASE("clean_check: the incremental check agrees with the whole check as a context grows", "[hygiene]") {
  chat_generator gen(11);
  for (int c = 0; c < 200; ++c) {
    const auto full = gen.context();
    boost::json::array grown;
    std::size_t upto = 0;
    for (const auto& m : full) {
      grown.push_back(m);
      upto = plainly_clean_upto(grown, upto);
      CHECK((upto == grown.size()) == plainly_clean(grown));
    }
  }
}

TEST_CASE("clean_check: each perturbation makes a context not plainly clean", "[hygiene]") {
  auto ctx = [](std::vector<std::string> items) { return context_of(items); };
  CHECK(plainly_clean(ctx({user("hi"), plain_assistant("hello"), user("more")})));
  CHECK(plainly_clean(boost::json::array{}));
  CHECK_FALSE(plainly_clean(ctx({user("hi"), user("again")})));                       // consecutive users
  CHECK_FALSE(plainly_clean(ctx({plain_assistant("first")})));                        // starts with the model
  CHECK_FALSE(plainly_clean(ctx({user("  ")})));                                      // blank user
  CHECK_FALSE(plainly_clean(ctx({user("hi"), plain_assistant("NO_REPLY")})));         // silent payload
  CHECK_FALSE(plainly_clean(ctx({user("hi"), plain_assistant("x", "error")})));       // error turn
  CHECK_FALSE(plainly_clean(ctx({user_blocks(text("a") + "," + image(png_base64(2, 2)))})));  // image
  CHECK_FALSE(plainly_clean(ctx({R"({"role":"compactionSummary","summary":"s","tokensBefore":1})"})));
}
