// `sessionrt simulate --state-dir DIR` never mixes simulated sessions into a real state dir
// unless told to with --force.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {
namespace {

const char* const kScenario =
    R"({"name": "one message", "start": "2026-05-04T09:00:00+02:00", "timeZone": "Europe/Paris",
        "steps": [{"id": "a", "send": {"channel": "telegram", "peer": "222", "text": "hello"}, "expect": {"ok": true}}]})";

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("simulate refuses a state dir that already holds sessions unless --force", "[cli]") {
  temp_dir dir;
  const std::string scenario = dir.file("s.json");
  write(scenario, kScenario);
  const std::string state = dir.file("state");
  const std::string store = state + "/agents/main/sessions/sessions.json";
  const std::string real_row = R"({
  "agent:main:discord:direct:5": {
    "sessionId": "real-1",
    "updatedAt": 1770000000000
  }
}
)";
  write(store, real_row);
  write(state + "/agents/main/sessions/real-1.jsonl", "");

  auto refused = run_sessionrt({"simulate", scenario, "--state-dir", state, "--quiet"});
  CHECK(refused.code == 2);
  CHECK(refused.out.empty());
  CHECK_THAT(refused.err, Catch::Contains("--state-dir " + state + " already holds sessions"));
  CHECK_THAT(refused.err, Catch::Contains(store + " (1 session row(s))"));
  CHECK_THAT(refused.err, Catch::Contains(state + "/agents/main/sessions (1 transcript(s))"));
  CHECK_THAT(refused.err, Catch::Contains("Nothing was written"));
  CHECK_THAT(refused.err, Catch::Contains("--force"));
  CHECK(read_text(store) == real_row);
  CHECK(split_lines(read_text(store)).size() == 6);

  // Transcripts alone (a store lost or never written) count too, and so does a store that does not parse.
  temp_dir other;
  write(other.file("agents/ops/sessions/x.jsonl"), "{}\n");
  auto transcripts = run_sessionrt({"simulate", scenario, "--state-dir", other.path(), "--quiet"});
  CHECK(transcripts.code == 2);
  CHECK_THAT(transcripts.err, Catch::Contains("agents/ops/sessions (1 transcript(s))"));
  temp_dir broken;
  write(broken.file("agents/main/sessions/sessions.json"), "{ not json");
  auto unreadable = run_sessionrt({"simulate", scenario, "--state-dir", broken.path(), "--quiet"});
  CHECK(unreadable.code == 2);
  CHECK_THAT(unreadable.err, Catch::Contains("sessions.json (does not parse"));

  // --force runs there: the simulated session is added, the real row stays.
  auto forced = run_sessionrt({"simulate", scenario, "--state-dir", state, "--quiet", "--force"});
  INFO(forced.err);
  CHECK(forced.code == 0);
  const std::string after = read_text(store);
  CHECK_THAT(after, Catch::Contains("\"agent:main:discord:direct:5\": {\n    \"sessionId\": \"real-1\""));
  CHECK_THAT(after, Catch::Contains("\"agent:main:main\""));  // the simulated user's
}

TEST_CASE("simulate writes into a new or empty state dir, and --force needs --state-dir", "[cli]") {
  temp_dir dir;
  const std::string scenario = dir.file("s.json");
  write(scenario, kScenario);
  auto fresh = run_sessionrt({"simulate", scenario, "--state-dir", dir.file("new-state"), "--quiet"});
  INFO(fresh.err);
  CHECK(fresh.code == 0);
  CHECK(std::filesystem::exists(dir.file("new-state/agents/main/sessions/sessions.json")));
  // An empty store (a runtime started and stopped) is no session.
  temp_dir empty;
  write(empty.file("agents/main/sessions/sessions.json"), "{}\n");
  CHECK(run_sessionrt({"simulate", scenario, "--state-dir", empty.path(), "--quiet"}).code == 0);
  auto force_alone = run_sessionrt({"simulate", scenario, "--force", "--quiet"});
  CHECK(force_alone.code == 2);
  CHECK_THAT(force_alone.err, Catch::Contains("--force requires --state-dir"));
}

}  // namespace sessionrt::testing
