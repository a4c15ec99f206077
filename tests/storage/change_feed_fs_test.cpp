// change_feed_fs: the names changed in a watched dir, and only those, are reported once.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <string>

#include "storage/change_feed_fs.hpp"
#include "storage/durable_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using Catch::Matchers::UnorderedEquals;

namespace {
std::vector<std::string> sorted(const std::optional<std::unordered_set<std::string>>& names) {
  REQUIRE(names.has_value());
  return {names->begin(), names->end()};
}
}  // namespace

TEST_CASE("change_feed_fs: creations, writes, renames and unlinks in a watched dir are reported once") {
  testing::temp_dir dir;
  REQUIRE(storage::posix_fs().mkdir(dir.file("other"), 0700).ok());
  storage::change_feed_fs feed(storage::posix_fs());
  feed.watch(dir.path());
  CHECK(sorted(feed.take(dir.path())).empty());
  CHECK_FALSE(feed.take(dir.file("other")).has_value());  // not watched

  auto fd = feed.open(dir.file("a.jsonl"), O_WRONLY | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd.ok());
  CHECK_THAT(sorted(feed.take(dir.path())), UnorderedEquals(std::vector<std::string>{"a.jsonl"}));
  // A write through the open descriptor is a change too, after the take.
  REQUIRE(storage::write_all(feed, *fd, "x\n", 2).ok());
  CHECK_THAT(sorted(feed.take(dir.path())), UnorderedEquals(std::vector<std::string>{"a.jsonl"}));
  REQUIRE(feed.close(*fd).ok());

  // Reading changes nothing.
  auto rd = feed.open(dir.file("a.jsonl"), O_RDONLY, 0);
  REQUIRE(rd.ok());
  char buf[4];
  REQUIRE(feed.pread(*rd, buf, sizeof buf, 0).ok());
  REQUIRE(feed.close(*rd).ok());
  CHECK(sorted(feed.take(dir.path())).empty());

  REQUIRE(feed.rename(dir.file("a.jsonl"), dir.file("a.jsonl.reset.1")).ok());
  REQUIRE(feed.link(dir.file("a.jsonl.reset.1"), dir.file("b.jsonl")).ok());
  REQUIRE(feed.unlink(dir.file("a.jsonl.reset.1")).ok());
  CHECK_THAT(sorted(feed.take(dir.path())),
             UnorderedEquals(std::vector<std::string>{"a.jsonl", "a.jsonl.reset.1", "b.jsonl"}));

  // A file in a dir below the watched one is not a direct entry.
  auto sub = feed.open(dir.file("other/c.jsonl"), O_WRONLY | O_CREAT, 0600);
  REQUIRE(sub.ok());
  REQUIRE(feed.close(*sub).ok());
  CHECK(sorted(feed.take(dir.path())).empty());
}
