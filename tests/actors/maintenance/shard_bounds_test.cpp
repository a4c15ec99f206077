// shard_bounds (a cluster shard's bounds, decided against the whole agent) and shard_census (a
// shard's rows and bytes read from its dir): the rule's invariants, and the planner running a
// shard's plan with them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "actors/maintenance/shard_bounds.hpp"
#include "actors/maintenance/shard_census.hpp"
#include "tests/actors/maintenance/maintenance_fixture.hpp"

namespace sessionrt::testing {
namespace {

using actors::maintenance_settings;
using actors::shard_bounds;
using actors::shard_load;

maintenance_settings enforce_settings() {
  maintenance_settings s;
  s.mode = actors::maintenance_mode::enforce;
  return s;
}

// A census of `shards` shards holding `rows` rows in all, spread unevenly (a fixed sequence,
// some shards empty, some far above the mean), `bytes_per_row` bytes each.
std::vector<shard_load> uneven_census(int shards, std::int64_t rows, std::int64_t bytes_per_row = 0) {
  std::vector<shard_load> census(static_cast<std::size_t>(shards));
  std::uint64_t x = 12345;
  for (std::int64_t n = 0; n < rows; ++n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    // Skewed: a quarter of the rows land in the first 8 shards.
    const std::uint64_t r = x >> 33;
    const std::size_t i = (r % 4 == 0) ? static_cast<std::size_t>(r / 4 % 8) : static_cast<std::size_t>(r % census.size());
    census[i].rows += 1;
    census[i].bytes += bytes_per_row;
  }
  return census;
}

std::vector<std::string> archived_rows_of(const actors::maintenance_plan& plan) {
  std::vector<std::string> keys;
  for (const auto& a : plan.actions)
    if (a.kind == actors::action_kind::archive_row) keys.push_back(a.key);
  return keys;
}

std::int64_t total_rows(const std::vector<shard_load>& census) {
  std::int64_t n = 0;
  for (const auto& s : census) n += s.rows;
  return n;
}

}  // namespace

TEST_CASE("shard bounds maintenance: an agent under maxEntries caps no shard however many rows it holds",
          "[maintenance]") {
  auto s = enforce_settings();  // maxEntries 500
  auto census = uneven_census(256, 300);
  REQUIRE(total_rows(census) == 300);
  std::int64_t fullest = 0;
  for (std::size_t i = 0; i < census.size(); ++i) {
    const auto b = shard_bounds(s, census, i);
    // The agent's own bound: no shard's rows can reach it (the 1/256 share was 2 rows).
    CHECK(b.max_entries == 500);
    CHECK_FALSE(b.cap_high_water_rows);
    CHECK(actors::cap_high_water(b) == 550);
    fullest = std::max(fullest, census[i].rows);
  }
  CHECK(fullest > 3);  // the skewed shards hold far more than 1/256 of the rows
}

TEST_CASE("shard bounds maintenance: an agent over maxEntries sheds its excess, shared by its shards",
          "[maintenance]") {
  auto s = enforce_settings();
  for (std::int64_t rows : {501, 549, 550, 700, 5000}) {
    INFO("rows " << rows);
    auto census = uneven_census(256, rows);
    const std::int64_t excess = rows - 500;
    std::int64_t caps = 0;
    for (std::size_t i = 0; i < census.size(); ++i) {
      const auto b = shard_bounds(s, census, i);
      const std::int64_t shed = census[i].rows - b.max_entries;
      const double exact = static_cast<double>(excess) * static_cast<double>(census[i].rows) / static_cast<double>(rows);
      CHECK(shed >= 0);
      CHECK(static_cast<double>(shed) > exact - 1.0);  // its part, to within one row
      CHECK(static_cast<double>(shed) < exact + 1.0);
      if (census[i].rows == 0) CHECK(b.max_entries == 0);
      // The scheduled pass caps at the agent's high water (550), a cleanup whenever over 500.
      REQUIRE(b.cap_high_water_rows);
      if (rows >= 550)
        CHECK(*b.cap_high_water_rows == b.max_entries + 1);
      else
        CHECK(*b.cap_high_water_rows == std::numeric_limits<std::int64_t>::max());
      caps += b.max_entries;
    }
    CHECK(caps == 500);  // exactly the excess is shed, not one row per shard more
  }
}

TEST_CASE("shard bounds maintenance: the disk budget is the agent's, the excess shared by bytes", "[maintenance]") {
  auto s = enforce_settings();
  s.max_disk_bytes = 1'000'000;  // high water 800000
  auto under = uneven_census(256, 300, 3000);  // 900000 bytes: within maxDiskBytes
  for (std::size_t i = 0; i < under.size(); ++i) {
    const auto b = shard_bounds(s, under, i);
    CHECK(b.max_disk_bytes == std::optional<std::int64_t>(1'000'000));
    CHECK(actors::high_water_bytes(b) == std::optional<std::int64_t>(800'000));
  }
  auto over = uneven_census(256, 300, 4000);  // 1200000 bytes: 400000 to free
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < over.size(); ++i) {
    const auto b = shard_bounds(s, over, i);
    REQUIRE(b.max_disk_bytes);
    const std::int64_t freed = over[i].bytes - *b.max_disk_bytes;
    const double exact = 400'000.0 * static_cast<double>(over[i].bytes) / 1'200'000.0;
    CHECK(static_cast<double>(freed) > exact - 1.0);
    CHECK(static_cast<double>(freed) < exact + 1.0);
    CHECK(actors::high_water_bytes(b) == b.max_disk_bytes);  // it frees down to what it keeps
    kept += *b.max_disk_bytes;
  }
  CHECK(kept == 800'000);
  // Terabytes do not overflow the proportion.
  std::vector<shard_load> big{{1, 3'000'000'000'000LL}, {1, 1'000'000'000'000LL}};
  s.max_disk_bytes = 2'000'000'000'000LL;  // high water 1.6 TB: 2.4 TB to free, 3/4 of it from shard 0
  CHECK(shard_bounds(s, big, 0).max_disk_bytes == std::optional<std::int64_t>(1'200'000'000'000LL));
  CHECK(shard_bounds(s, big, 1).max_disk_bytes == std::optional<std::int64_t>(400'000'000'000LL));
}

TEST_CASE("shard bounds maintenance: a single shard keeps exactly the agent's settings", "[maintenance]") {
  auto s = enforce_settings();
  s.max_entries = 3;
  s.max_disk_bytes = 100;
  for (const auto& census : {std::vector<shard_load>{}, std::vector<shard_load>{{900, 5000}}}) {
    const auto b = shard_bounds(s, census, 0);
    CHECK(b.max_entries == 3);
    CHECK_FALSE(b.cap_high_water_rows);
    CHECK(b.max_disk_bytes == std::optional<std::int64_t>(100));
    CHECK_FALSE(b.high_water_bytes);
  }
  CHECK(actors::shard_shed(0, {10, 10}, 0) == 0);
  CHECK(actors::shard_shed(30, {10, 10}, 0) == 10);  // never more than the shard holds
  // An excess of 1 over 3 equal shards: one row from one shard, not one from each.
  CHECK(actors::shard_shed(1, {5, 5, 5}, 0) == 1);
  CHECK(actors::shard_shed(1, {5, 5, 5}, 1) == 0);
  CHECK(actors::shard_shed(1, {5, 5, 5}, 2) == 0);
}

TEST_CASE("shard bounds maintenance: the planner caps a shard only by its part of the agent's excess",
          "[maintenance]") {
  sessions_fixture fx;
  for (int i = 0; i < 10; ++i) {
    fx.row("agent:main:explicit:dm" + std::to_string(i), "s" + std::to_string(i), (i + 1) * 1000);
    fx.transcript("s" + std::to_string(i), 100, 1000);
  }
  fx.save();
  auto s = enforce_settings();
  s.max_entries = 20;  // high water 21
  // This shard (index 0) holds 10 of the agent's 19 rows: under 20, nothing is capped, though
  // the even 1/4 share (5 rows) would archive 5.
  std::vector<shard_load> census{{10, 0}, {3, 0}, {3, 0}, {3, 0}};
  CHECK(fx.plan(shard_bounds(s, census, 0)).cap_archived == 0);
  CHECK(fx.plan(shard_bounds(s, census, 0), {}, true).cap_archived == 0);
  CHECK(fx.plan(actors::shard_share(s, 4)).cap_archived == 5);  // the old rule
  // 22 rows in all (past the high water 21): 2 to shed, this shard's part 20 / 22 rounds to 1,
  // its least active row.
  census = {{10, 0}, {4, 0}, {4, 0}, {4, 0}};
  auto plan = fx.plan(shard_bounds(s, census, 0));
  CHECK(plan.cap_archived == 1);
  CHECK(archived_rows_of(plan) == std::vector<std::string>{"agent:main:explicit:dm9"});
  // 21 rows, the high water of 20: 1 to shed; this shard, the largest, sheds it.
  census = {{10, 0}, {4, 0}, {4, 0}, {3, 0}};
  CHECK(fx.plan(shard_bounds(s, census, 0)).cap_archived == 1);
  CHECK(shard_bounds(s, census, 1).max_entries == 4);  // the others shed nothing
  // 21 rows with maxEntries 21: within the bound, nothing.
  s.max_entries = 21;
  CHECK(fx.plan(shard_bounds(s, census, 0)).cap_archived == 0);
}

TEST_CASE("shard bounds maintenance: between maxEntries and the high water only a cleanup caps", "[maintenance]") {
  sessions_fixture fx;
  for (int i = 0; i < 60; ++i) fx.row("agent:main:explicit:dm" + std::to_string(i), "s" + std::to_string(i), (i + 1) * 1000);
  fx.save();
  auto s = enforce_settings();
  s.max_entries = 100;  // high water 125
  std::vector<shard_load> census{{60, 0}, {60, 0}};  // 120: over 100, under 125
  CHECK(fx.plan(shard_bounds(s, census, 0)).cap_archived == 0);
  CHECK(fx.plan(shard_bounds(s, census, 0), {}, true).cap_archived == 10);  // its half of 20
}

TEST_CASE("shard bounds maintenance: a sibling shard's dir is found from this shard's", "[maintenance]") {
  CHECK(actors::sibling_sessions_dir("/c/shards/main/017/agents/main/sessions", "main", "017", 3) ==
        std::optional<std::string>("/c/shards/main/003/agents/main/sessions"));
  CHECK(actors::sibling_sessions_dir("/c/shards/main/017/agents/main/sessions/", "main", "017", 1024) ==
        std::optional<std::string>("/c/shards/main/1024/agents/main/sessions"));
  CHECK_FALSE(actors::sibling_sessions_dir("/c/agents/main/sessions", "main", "017", 3));
}

TEST_CASE("shard census maintenance: a shard's unarchived rows and bytes are read from its dir", "[maintenance]") {
  sessions_fixture fx;
  fx.row("agent:main:explicit:a", "a", 1000);
  fx.row("agent:main:explicit:b", "b", 1000, {{"archivedAt", fixture_now}});
  fx.row("agent:main:explicit:c", "c", 1000);
  fx.transcript("a", 500, 1000);
  fx.save();
  auto reading = actors::read_shard_load(storage::posix_fs(), fx.dir());
  CHECK(reading.problem.empty());
  CHECK_FALSE(reading.missing);
  CHECK(reading.load.rows == 2);  // the archived row does not count, as for the cap
  std::int64_t bytes = 0;
  for (const auto& f : fx.listing()) bytes += static_cast<std::int64_t>(f.size);
  CHECK(reading.load.bytes == bytes);
  CHECK(reading.load.bytes > 500);

  auto none = actors::read_shard_load(storage::posix_fs(), fx.dir() + "/nothing");
  CHECK(none.missing);
  CHECK(none.load.rows == 0);
  CHECK(none.problem.empty());

  write_text(fx.store_path(), "[1, 2");
  auto bad = actors::read_shard_load(storage::posix_fs(), fx.dir());
  CHECK_FALSE(bad.problem.empty());
  CHECK(bad.load.rows == 0);
}

}  // namespace sessionrt::testing
