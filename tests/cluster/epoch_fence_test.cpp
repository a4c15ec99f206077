#include "cluster/epoch_fence.hpp"

#include <catch2/catch.hpp>

#include "cluster/shard_epoch_file.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"

namespace sessionrt::cluster {

TEST_CASE("epoch fence: open stamps a newer epoch, writes on its own, refuses a lower one", "[cluster][fence]") {
  const shard_id s{"main", 17};
  epoch_fence mine(s, "n1", 42);
  CHECK(mine.on_open(std::nullopt) == open_decision::stamp_then_write);
  CHECK(mine.on_open(41) == open_decision::stamp_then_write);
  CHECK(mine.on_open(42) == open_decision::write);
  CHECK(mine.on_open(57) == open_decision::fenced);
  auto st = mine.fenced(57);
  CHECK(st.code() == errc::locked);
  CHECK_THAT(st.message(), Catch::Contains("main/17") && Catch::Contains("epoch 57") && Catch::Contains("epoch 42") &&
                               Catch::Contains("fenced"));
}

TEST_CASE("epoch fence: every write needs the shard's epoch to be ours and a fresh lease", "[cluster][fence]") {
  manual_clock mono(0);
  write_permit permit(mono, "n1");
  permit.start(10000, 0);
  epoch_fence fence({"main", 3}, "n1", 42);
  CHECK(fence.check_write(42, permit).ok());
  CHECK(fence.check_write(57, permit).code() == errc::locked);    // another node took it
  CHECK(fence.check_write(41, permit).code() == errc::internal);  // never stamped: a bug
  mono.set(5000);
  auto st = fence.check_write(42, permit);
  CHECK(st.code() == errc::locked);
  CHECK_THAT(st.message(), Catch::Contains("shard main/3") && Catch::Contains("TTL/2"));
}

TEST_CASE("shard epoch file: the first owner stamps, a later owner raises, the old one is fenced", "[cluster][fence]") {
  manual_clock t(0);
  storage::memory_fs fs(t);
  const std::string dir = "/state/shards/main/17";
  auto none = read_shard_epoch(fs, shard_epoch_path(dir));
  REQUIRE(none.ok());
  CHECK(!none->has_value());

  epoch_fence a({"main", 17}, "n1", 42);
  auto opened = open_shard(fs, dir, a);
  REQUIRE(opened.ok());
  CHECK(*opened == 42);
  auto stamped = read_shard_epoch(fs, shard_epoch_path(dir));
  REQUIRE(stamped.ok());
  CHECK(**stamped == 42);
  CHECK(open_shard(fs, dir, a).ok());  // reopened by the same owner: nothing to do

  epoch_fence b({"main", 17}, "n2", 57);
  REQUIRE(open_shard(fs, dir, b).ok());
  auto refused = open_shard(fs, dir, a);
  REQUIRE(!refused.ok());
  CHECK(refused.error().code() == errc::locked);
  CHECK_THAT(refused.error().message(), Catch::Contains("fenced"));
  auto lower = stamp_shard_epoch(fs, shard_epoch_path(dir), 42, "n1");
  CHECK(lower.code() == errc::locked);
  auto now = read_shard_epoch(fs, shard_epoch_path(dir));
  REQUIRE(now.ok());
  CHECK(**now == 57);  // the old owner changed nothing
}

TEST_CASE("shard epoch file: an unreadable stamp is reported, never overwritten", "[cluster][fence]") {
  manual_clock t(0);
  storage::memory_fs fs(t);
  const std::string dir = "/state/shards/main/1";
  REQUIRE(storage::ensure_dir(fs, dir).ok());
  REQUIRE(storage::replace_file_atomic(fs, shard_epoch_path(dir), "garbage").ok());
  auto r = open_shard(fs, dir, epoch_fence({"main", 1}, "n1", 5));
  REQUIRE(!r.ok());
  CHECK(r.error().code() == errc::corrupt);
  CHECK_THAT(r.error().message(), Catch::Contains("/state/shards/main/1/epoch"));
  auto text = storage::read_file(fs, shard_epoch_path(dir), 100);
  REQUIRE(text.ok());
  CHECK(*text == "garbage");
}

}  // namespace sessionrt::cluster
