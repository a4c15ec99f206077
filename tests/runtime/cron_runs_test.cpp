// Isolated cron runs as OpenClaw runs them [R§5.6]: each run its own
// agent:<a>:cron:<job>:run:<sessionId> row beside the base row that points at the latest run,
// the run log <stateDir>/cron/runs/<jobId>.jsonl trimmed past cron.runLog.maxBytes, and the
// cron.sessionRetention reaper run by the maintenance actor.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/runtime/lifecycle_harness.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::runtime;

namespace {

constexpr std::int64_t kHour = 3600LL * 1000;

// The lifecycle harness with the simulated model itself (asynchronous) as the runner.
struct cron_harness : testing::lifecycle_harness {
  std::shared_ptr<simulated_model> sim = std::make_shared<simulated_model>(clk);

  std::unique_ptr<runtime::runtime> start(std::function<void(actors::runtime_settings&)> tweak = {}) {
    return lifecycle_harness::start(tweak, sim);
  }
  std::string run_log() const { return dir.path() + "/cron/runs/digest.jsonl"; }
  std::vector<std::string> run_log_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(testing::read_text(run_log()));
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) lines.push_back(l);
    return lines;
  }
};

void run_job(runtime::runtime& rt, const std::string& text) {
  system_event ev;
  ev.kind = system_event_kind::cron;
  ev.job_id = "digest";
  ev.job_name = "Morning digest";
  ev.text = text;
  rt.send(ev);
  rt.settle();
}

const std::string kBase = "agent:main:cron:digest";
std::string run_key(const std::string& id) { return kBase + ":run:" + id; }

std::string session_id_of(runtime::runtime& rt, const std::string& key) {
  auto row = rt.session(key).value();
  REQUIRE(row.has_value());
  return std::string(row->session_id().value_or(""));
}

}  // namespace

TEST_CASE("cron: each isolated run gets its own run row and the base row points at the latest run") {
  cron_harness h;
  auto rt = h.start();
  run_job(*rt, "first digest");
  const std::string first = session_id_of(*rt, kBase);
  REQUIRE(rt->advance(60 * 1000).ok());
  run_job(*rt, "second digest");
  const std::string second = session_id_of(*rt, kBase);
  CHECK(first != second);
  CHECK(session_id_of(*rt, run_key(first)) == first);
  CHECK(session_id_of(*rt, run_key(second)) == second);
  auto run_row = rt->session(run_key(second)).value();
  CHECK(run_row->label() == std::optional<std::string_view>("Cron: Morning digest"));
  // The first run's transcript stays for its run row.
  CHECK(std::filesystem::exists(h.sessions_dir() + "/" + first + ".jsonl"));
  CHECK(std::filesystem::exists(h.sessions_dir() + "/" + second + ".jsonl"));
  // One run-log line per run.
  auto lines = h.run_log_lines();
  REQUIRE(lines.size() == 2);
  auto last = json::parse(lines[1]);
  REQUIRE(last.ok());
  const auto& o = last->as_object();
  CHECK(json::get_string(o, "jobId") == std::optional<std::string_view>("digest"));
  CHECK(json::get_string(o, "status") == std::optional<std::string_view>("ok"));
  CHECK(json::get_string(o, "sessionId") == std::optional<std::string_view>(second));
  CHECK(json::get_string(o, "sessionKey") == std::optional<std::string_view>(run_key(second)));
  REQUIRE(rt->stop().ok());
}

TEST_CASE("cron: the run log is trimmed to keepLines once over maxBytes") {
  cron_harness h;
  auto rt = h.start([](actors::runtime_settings& s) {
    s.cron.run_log_max_bytes = 600;
    s.cron.run_log_keep_lines = 2;
  });
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    run_job(*rt, "digest " + std::to_string(i));
    ids.push_back(session_id_of(*rt, kBase));
    h.clk.advance(60 * 1000);
  }
  auto lines = h.run_log_lines();
  CHECK(lines.size() <= 3);  // trimmed to 2 whenever over 600 bytes, then one more at most
  CHECK(std::filesystem::file_size(h.run_log()) <= 600 + lines.back().size() + 1);
  CHECK(lines.back().find(ids.back()) != std::string::npos);
  CHECK(testing::read_text(h.run_log()).find(ids.front()) == std::string::npos);
  REQUIRE(rt->stop().ok());
}

TEST_CASE("cron: the reaper removes run rows past sessionRetention and archives their transcripts") {
  cron_harness h;
  // session.maintenance.mode stays warn (the default): the reaper is cron.sessionRetention's.
  auto rt = h.start();
  run_job(*rt, "old run one");
  const std::string one = session_id_of(*rt, kBase);
  h.clk.advance(60 * 1000);
  run_job(*rt, "old run two");
  const std::string two = session_id_of(*rt, kBase);
  h.clk.advance(25 * kHour);
  run_job(*rt, "new run");
  const std::string three = session_id_of(*rt, kBase);

  auto report = rt->maintain();
  REQUIRE(report.ok());
  CHECK_FALSE(rt->session(run_key(one)).value().has_value());
  CHECK_FALSE(rt->session(run_key(two)).value().has_value());
  CHECK(session_id_of(*rt, run_key(three)) == three);
  CHECK(session_id_of(*rt, kBase) == three);  // base rows are kept
  std::size_t archived = 0;
  for (auto& e : std::filesystem::directory_iterator(h.sessions_dir())) {
    const std::string n = e.path().filename().string();
    if (n.rfind(one + ".jsonl.deleted.", 0) == 0 || n.rfind(two + ".jsonl.deleted.", 0) == 0) ++archived;
  }
  CHECK(archived == 2);
  CHECK_FALSE(std::filesystem::exists(h.sessions_dir() + "/" + one + ".jsonl"));
  CHECK(std::filesystem::exists(h.sessions_dir() + "/" + three + ".jsonl"));
  bool reaper_reported = false;
  for (const auto& s : report->data.at("stores").as_array())
    if (json::get_string(s.as_object(), "plan") == std::optional<std::string_view>("cron-reaper"))
      reaper_reported = s.as_object().at("rowsRemoved").to_number<std::int64_t>() == 2;
  CHECK(reaper_reported);
  REQUIRE(rt->stop().ok());
}
