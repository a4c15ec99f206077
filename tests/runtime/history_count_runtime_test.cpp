// runtime::history after a restart takes totalMessages from the count the session keeps in its
// row (actors/session/history_count.hpp) instead of walking the transcript to its root: the
// first page after a start is bounded by the page, not by the transcript.
#include <catch2/catch.hpp>

#include "actors/session/history_count.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/session_paths.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z

std::unique_ptr<runtime::runtime> start(const std::string& state, manual_clock& clk) {
  runtime::runtime_options o;
  o.settings.state_dir = state;
  o.settings.session.reset.timezone = "UTC";
  actors::reset_config off;
  off.mode = actors::reset_mode::none;
  o.settings.session.reset.reset = off;
  o.runner = std::make_shared<runtime::simulated_model>(clk);
  o.time = &clk;
  o.virtual_time = true;
  o.threads = 2;
  auto rt = runtime::runtime::start(std::move(o));
  REQUIRE(rt.ok());
  return std::move(*rt);
}

}  // namespace

TEST_CASE("history after a restart: totalMessages from the count in the session's row") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  std::string key;
  {
    auto rt = start(dir.path(), clk);
    for (int i = 0; i < 130; ++i) {  // 260 items: past kMinCountedItems
      auto out = rt->send(testing::dm("7", "message " + std::to_string(i))).get();
      REQUIRE(out.st.ok());
      key = out.session_key;
      clk.advance(1000);
    }
    auto row = rt->session(key).value();
    REQUIRE(row.has_value());
    auto count = actors::history_count_of(*row);
    REQUIRE(count);
    CHECK(count->total == 260);
    REQUIRE(rt->stop().ok());
  }
  const std::string store = *storage::store_path(dir.path(), "main");
  {
    auto rt = start(dir.path(), clk);
    auto page = rt->history(key, 10);
    REQUIRE(page.ok());
    CHECK(page->total_messages == 260);
    CHECK(page->messages.size() == 10);
    CHECK(page->seqs.back() == 260);
    REQUIRE(rt->stop().ok());
  }
  // The page trusts the row's count (it is not recounted): a row that says 999 for the same
  // leaf gives 999. (Written by hand here only to show where the figure comes from.)
  std::string text = testing::read_text(store);
  const auto at = text.find("\"total\": 260");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"total\": 999");
  testing::write_text(store, text);
  auto rt = start(dir.path(), clk);
  auto page = rt->history(key, 10);
  REQUIRE(page.ok());
  CHECK(page->total_messages == 999);
  CHECK(page->seqs.back() == 999);
  REQUIRE(rt->stop().ok());
}
