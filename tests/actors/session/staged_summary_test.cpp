// Staged summarization rules (staged_summary.hpp): placeholders for oversized messages, the
// chunk budget, and chunks that keep order and stay within it.
#include <catch2/catch.hpp>

#include "actors/session/staged_summary.hpp"
#include "actors/session/token_estimate.hpp"
#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
boost::json::object user_of(std::size_t chars, int i) { return user_message(std::string(chars, 'a' + i % 26), i); }
}  // namespace

TEST_CASE("oversized messages become placeholders naming their role and size") {
  CHECK(oversized_placeholder("assistant", 52340) == "[Large assistant (~52K tokens) omitted from summary]");
  CHECK(oversized_placeholder("toolResult", 499) == "[Large toolResult (~0K tokens) omitted from summary]");
  // window 10,000: a message is oversized when estimate x 1.2 > 5,000, i.e. above ~4,166 tokens.
  std::vector<boost::json::object> in{user_of(4000 * 4, 0), user_of(4200 * 4, 1), user_of(40, 2)};
  auto out = replace_oversized(in, 10000);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == in[0]);
  CHECK(json::get_string(out[1], "content") == std::optional<std::string_view>("[Large user (~4K tokens) omitted from summary]"));
  CHECK(json::get_string(out[1], "role") == std::optional<std::string_view>("user"));
  CHECK(out[1].at("timestamp") == in[1].at("timestamp"));
  CHECK(out[2] == in[2]);
}

TEST_CASE("the chunk budget leaves room for the answer, the running summary and the prompt") {
  // 200k window, 16,000-token answers: (200000 - 32000 - 4096) / 1.2
  CHECK(chunk_budget_tokens(200000, 16000) == 136586);
  // a small window: the overhead is a quarter of it; (3000 - 960 - 750) / 1.2
  CHECK(chunk_budget_tokens(3000, 480) == 1075);
  CHECK(chunk_budget_tokens(1000, 800) == 1);  // never zero or negative
}

TEST_CASE("chunks keep the messages in order and each stays within the budget") {
  std::vector<boost::json::object> in;
  for (int i = 0; i < 50; ++i) in.push_back(user_of(100 + 37 * (i % 7) * 4, i));
  const std::int64_t budget = 600;
  auto chunks = chunk_messages(in, budget);
  REQUIRE(chunks.size() > 1);
  std::vector<boost::json::object> joined;
  for (const auto& c : chunks) {
    REQUIRE_FALSE(c.empty());
    std::int64_t used = 0;
    for (const auto& m : c) used += static_cast<std::int64_t>(std::ceil(estimate_tokens(m) * 1.2));
    CHECK((used <= budget || c.size() == 1));
    joined.insert(joined.end(), c.begin(), c.end());
  }
  CHECK(joined == in);
  CHECK(chunk_messages({}, budget).empty());
  // Chunks are filled greedily (that is what bounds the number of summary calls): 100-token
  // messages (120 with the margin) against a budget of 600 go 5 to a chunk.
  std::vector<boost::json::object> uniform;
  for (int i = 0; i < 50; ++i) uniform.push_back(user_of(400, i));
  REQUIRE(estimate_tokens(uniform[0]) == 100);
  auto packed = chunk_messages(uniform, 600);
  REQUIRE(packed.size() == 10);
  for (const auto& c : packed) CHECK(c.size() == 5);
  // A single message above the budget is a chunk of its own.
  std::vector<boost::json::object> big{user_of(40, 0), user_of(4000, 1), user_of(40, 2)};
  auto c2 = chunk_messages(big, 100);
  REQUIRE(c2.size() == 3);
  CHECK(c2[1].front() == big[1]);
}
