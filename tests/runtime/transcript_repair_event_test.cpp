// Repair on load for a run [R§8.1, SPEC §6.1] through the runtime: a transcript whose tail is
// clean but whose middle is damaged (a malformed line, a blank user turn) is repaired when the
// session opens it, the runtime emits `transcript.repaired`, and the backup is gone.
#include <catch2/catch.hpp>

#include <mutex>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/archive_names.hpp"
#include "storage/durable_file.hpp"
#include "tests/runtime/event_log.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

// The lifecycle harness with the simulated model itself (asynchronous) as the runner.
struct repair_harness : testing::lifecycle_harness {
  std::shared_ptr<simulated_model> sim = std::make_shared<simulated_model>(clk);
  testing::event_log log;  // what happens after start

  std::unique_ptr<runtime::runtime> start() {
    auto rt = lifecycle_harness::start({}, sim);
    log.attach(*rt);
    return rt;
  }
};

}  // namespace

TEST_CASE("a clean-tailed damaged transcript is repaired when its session opens, with a transcript.repaired event") {
  repair_harness h;
  std::string path;
  {
    auto rt = h.start();
    auto out = rt->send(testing::dm("123", "first")).get();
    REQUIRE(out.st.ok());
    auto row = rt->session(out.session_key).value();
    REQUIRE(row.has_value());
    path = std::string(row->session_file().value_or(""));
    REQUIRE(rt->stop().ok());
  }
  // Damage the middle, keep the tail clean: a malformed line and a blank user turn after the header.
  auto lines = testing::split_lines(testing::read_text(path));
  REQUIRE(lines.size() >= 3);
  std::string damaged = lines[0] + "\n" + R"({"type":"message","id":"zz","parentId":nul)" + "\n";
  for (std::size_t k = 1; k < lines.size(); ++k) {
    std::string l = lines[k];
    auto at = l.find("\"content\":\"first\"");
    if (at != std::string::npos) l.replace(at, 17, "\"content\":\"  \"");
    damaged += l + "\n";
  }
  testing::write_text(path, damaged);
  h.log.clear();

  auto rt = h.start();
  auto again = rt->send(testing::dm("123", "second")).get();
  INFO(again.st.to_string());
  REQUIRE(again.st.ok());
  REQUIRE(rt->stop().ok());

  const auto repaired = h.log.of("transcript.repaired");
  REQUIRE_FALSE(repaired.empty());
  const auto* it = &repaired.front();
  CHECK(json::get_string(it->data, "path") == std::optional<std::string_view>(path));
  CHECK(json::get_int(it->data, "droppedLines") == std::optional<std::int64_t>(1));
  auto summary = json::get_string(it->data, "summary");
  REQUIRE(summary);
  CHECK_THAT(std::string(*summary), Catch::Contains("dropped 1 malformed line(s)"));
  CHECK_THAT(std::string(*summary), Catch::Contains("rewrote 1 user message(s)"));
  // Nothing is lost: the malformed line and the blank user turn's original line are kept,
  // byte for byte, in <file>.dropped-<ts>.jsonl, named by the event and the summary.
  auto kept_at = json::get_string(it->data, "keptAt");
  REQUIRE(kept_at);
  CHECK(storage::path_dirname(std::string(*kept_at)) == storage::path_dirname(path));
  CHECK(storage::classify(storage::path_basename(std::string(*kept_at))).kind == storage::artifact_kind::dropped_lines);
  CHECK_THAT(std::string(*summary), Catch::Contains(std::string(*kept_at)));
  auto kept = testing::split_lines(testing::read_text(std::string(*kept_at)));
  REQUIRE(kept.size() == 2);
  CHECK(kept[0] == R"({"type":"message","id":"zz","parentId":nul)");
  CHECK(kept[1].find("\"content\":\"  \"") != std::string::npos);
  // The backup was removed after the replace; the file parses line by line.
  for (const auto& n : testing::list_names(storage::path_dirname(path))) CHECK(n.find(".bak-") == std::string::npos);
  for (const auto& l : testing::split_lines(testing::read_text(path))) CHECK(json::parse_object(l).ok());
  CHECK(testing::read_text(path).find("\"content\":\"(continue)\"") != std::string::npos);
}
