#include <catch2/catch.hpp>

#include "actors/session/midturn_precheck.hpp"
#include "messages/transcript_entry.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

boost::json::object tool_result(std::size_t chars) {
  return {{"role", "toolResult"},
          {"toolCallId", "call_1"},
          {"toolName", "read"},
          {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", std::string(chars, 'x')}}}},
          {"isError", false},
          {"timestamp", 1}};
}

}  // namespace

TEST_CASE("midturn precheck: fits, truncate tool results, or compact") {
  boost::json::array added;
  added.emplace_back(tool_result(4000));  // ~1000 tokens
  CHECK(decide_precheck(1000, 10000, added).what == precheck_answer::verdict::fits);
  CHECK(decide_precheck(1000, 10000, added).context_tokens == 2000);

  boost::json::array big;
  big.emplace_back(tool_result(400000));  // ~100k tokens: cutting it wins the excess back
  auto t = decide_precheck(1000, 10000, big);
  CHECK(t.what == precheck_answer::verdict::truncate_tool_results);
  CHECK(t.max_tool_result_chars == 36000);  // (10000 - 1000) tokens x 4 chars
  CHECK(t.context_tokens > t.threshold);

  // The request alone nearly fills the window: nothing to cut that would help.
  auto c = decide_precheck(9800, 10000, big);  // 200 tokens left: under kMinToolResultChars
  CHECK(c.what == precheck_answer::verdict::compact);
  auto none = decide_precheck(20000, 10000, boost::json::array{});
  CHECK(none.what == precheck_answer::verdict::compact);
}

TEST_CASE("midturn precheck: the object a request carries answers from any copy of its numbers") {
  auto p = make_context_precheck(1000, 10000);
  boost::json::array added;
  added.emplace_back(tool_result(400000));
  CHECK(p->check(added).what == precheck_answer::verdict::truncate_tool_results);
  CHECK(p->check(boost::json::array{}).what == precheck_answer::verdict::fits);
}
