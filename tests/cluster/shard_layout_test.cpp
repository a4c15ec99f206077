// The per-shard layout of a cluster state dir (cluster/shard_layout.hpp).
#include "cluster/shard_layout.hpp"

#include <catch2/catch.hpp>

#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"

namespace sessionrt::cluster {

TEST_CASE("shard layout: a shard is a state dir of its own under shards/agent/nnn", "[cluster][shard_layout]") {
  CHECK(shards_root("/c") == "/c/shards");
  CHECK(shard_dir_name(0) == "000");
  CHECK(shard_dir_name(17) == "017");
  CHECK(shard_dir_name(1024) == "1024");
  auto dir = shard_dir("/c", {"main", 17});
  REQUIRE(dir.ok());
  CHECK(*dir == "/c/shards/main/017");
  auto sessions = shard_sessions_dir("/c", {"ops", 255});
  REQUIRE(sessions.ok());
  CHECK(*sessions == "/c/shards/ops/255/agents/ops/sessions");
  auto store = shard_store_path("/c", {"main", 3});
  REQUIRE(store.ok());
  CHECK(*store == "/c/shards/main/003/agents/main/sessions/sessions.json");

  CHECK(shard_dir("/c", {"../x", 1}).error().code() == errc::unsafe_path);
  CHECK(shard_dir("/c", {"main", -1}).error().code() == errc::invalid_argument);
  CHECK(shard_dir("/c", {"main", max_shards_per_agent}).error().code() == errc::invalid_argument);
}

TEST_CASE("shard layout: only the canonical spelling of an index names a shard", "[cluster][shard_layout]") {
  CHECK(parse_shard_dir_name("017") == 17);
  CHECK(parse_shard_dir_name("000") == 0);
  CHECK(parse_shard_dir_name("999") == 999);
  CHECK(parse_shard_dir_name("4095") == 4095);
  CHECK(!parse_shard_dir_name("17"));    // two names for one shard would give it two writers
  CHECK(!parse_shard_dir_name("0017"));
  CHECK(!parse_shard_dir_name("4096"));  // past max_shards_per_agent
  CHECK(!parse_shard_dir_name("01a"));
  CHECK(!parse_shard_dir_name(""));
}

TEST_CASE("shard layout: the listing gives shards by agent and index and names what it skipped",
          "[cluster][shard_layout]") {
  manual_clock t(0);
  storage::memory_fs fs(t);
  auto empty = list_shards(fs, "/c");
  REQUIRE(empty.ok());
  CHECK(empty->shards.empty());
  for (const char* d : {"/c/shards/main/017", "/c/shards/main/000", "/c/shards/main/1000", "/c/shards/ops/003",
                        "/c/shards/main/17", "/c/shards/main/tmp"})
    REQUIRE(storage::ensure_dir(fs, d).ok());
  REQUIRE(storage::replace_file_atomic(fs, "/c/shards/main/018", "a file, not a shard").ok());
  REQUIRE(storage::replace_file_atomic(fs, "/c/shards/README", "x").ok());
  auto listed = list_shards(fs, "/c");
  REQUIRE(listed.ok());
  std::vector<std::string> got;
  for (const auto& s : listed->shards) got.push_back(to_string(s.shard) + "=" + s.dir);
  CHECK(got == std::vector<std::string>{"main/0=/c/shards/main/000", "main/17=/c/shards/main/017",
                                        "main/1000=/c/shards/main/1000", "ops/3=/c/shards/ops/003"});
  std::sort(listed->skipped.begin(), listed->skipped.end());
  CHECK(listed->skipped == std::vector<std::string>{"/c/shards/README", "/c/shards/main/018", "/c/shards/main/17",
                                                    "/c/shards/main/tmp"});
}

}  // namespace sessionrt::cluster
