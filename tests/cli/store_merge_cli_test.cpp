// `sessionrt store merge --cluster-dir DIR --out STATE_DIR`: the command line over
// cluster/shard_merge (tested there in depth): exit codes, the summary, --json, --force.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

#include "tests/cli/cli_run.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {
namespace {

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

const char* const kTranscript =
    R"({"type":"session","version":3,"id":"01a22a13-f275-7438-9fcb-df6c4fc1d0eb","timestamp":"2026-11-30T01:31:20.053Z","cwd":"/w"})"
    "\n";

// Two shards of agent main, one row each; the second also holds a stray copy of the first's key.
void make_cluster(const std::string& cluster, bool duplicate) {
  write(cluster + "/shards/main/003/agents/main/sessions/sessions.json",
        R"({"agent:main:a": {"sessionId": "01a22a13-f275-7438-9fcb-df6c4fc1d0eb", "updatedAt": 20}})");
  write(cluster + "/shards/main/003/agents/main/sessions/01a22a13-f275-7438-9fcb-df6c4fc1d0eb.jsonl", kTranscript);
  write(cluster + "/shards/main/200/agents/main/sessions/sessions.json",
        duplicate ? R"({"agent:main:b": {"sessionId": "s-b", "updatedAt": 5}, "agent:main:a": {"sessionId": "old", "updatedAt": 10}})"
                  : R"({"agent:main:b": {"sessionId": "s-b", "updatedAt": 5}})");
}

}  // namespace

TEST_CASE("store merge writes one sessions.json per agent and refuses a non-empty out without --force", "[cli]") {
  temp_dir dir;
  const std::string cluster = dir.file("cluster"), out = dir.file("out");
  make_cluster(cluster, false);
  auto r = run_sessionrt({"store", "merge", "--cluster-dir", cluster, "--out", out});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("merged 2 shard(s) of 1 agent(s) into " + out + ": 2 row(s), 1 file(s)"));
  const std::string merged = read_text(out + "/agents/main/sessions/sessions.json");
  CHECK_THAT(merged, Catch::Contains("\"agent:main:a\"") && Catch::Contains("\"agent:main:b\""));
  CHECK(read_text(out + "/agents/main/sessions/01a22a13-f275-7438-9fcb-df6c4fc1d0eb.jsonl") == kTranscript);

  auto again = run_sessionrt({"store", "merge", "--cluster-dir", cluster, "--out", out});
  CHECK(again.code == 2);
  CHECK_THAT(again.err, Catch::Contains("is not empty") && Catch::Contains("--force"));
  auto forced = run_sessionrt({"store", "merge", "--cluster-dir", cluster, "--out", out, "--force", "--json"});
  CHECK(forced.code == 0);
  auto doc = boost::json::parse(forced.out).as_object();
  CHECK(doc.at("rows").as_int64() == 2);
  CHECK(doc.at("replaced").is_string());
}

TEST_CASE("store merge names a key found in two shards, keeps the newest row and exits 1", "[cli]") {
  temp_dir dir;
  const std::string cluster = dir.file("cluster"), out = dir.file("out");
  make_cluster(cluster, true);
  auto r = run_sessionrt({"store", "merge", "--cluster-dir", cluster, "--out", out});
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Catch::Contains("key in two shards: agent:main:a in main/3 (updatedAt 20) and main/200 "
                                    "(updatedAt 10); kept main/3, the newest"));
  const std::string merged = read_text(out + "/agents/main/sessions/sessions.json");
  CHECK_THAT(merged, Catch::Contains("01a22a13-f275-7438-9fcb-df6c4fc1d0eb") && !Catch::Contains("\"old\""));
}

}  // namespace sessionrt::testing
