// dir_listing: refreshed from a change feed, the picture equals a full scan's.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <string>

#include "actors/maintenance/dir_listing.hpp"
#include "actors/maintenance/plan_applier.hpp"
#include "storage/change_feed_fs.hpp"
#include "storage/durable_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {
void put(storage::fs& f, const std::string& path, const std::string& text, int flags = O_APPEND) {
  auto fd = f.open(path, O_WRONLY | O_CREAT | flags, 0600);
  REQUIRE(fd.ok());
  REQUIRE(storage::write_all(f, *fd, text.data(), text.size()).ok());
  REQUIRE(f.close(*fd).ok());
}
std::string describe(const std::vector<dir_file>& files) {
  std::string out;
  for (const auto& f : files) out += f.name + ":" + std::to_string(f.size) + ":" + std::to_string(f.mtime_ms) + " ";
  return out;
}
}  // namespace

TEST_CASE("dir_listing: a refresh from the change feed gives what a full scan gives") {
  testing::temp_dir dir;
  storage::change_feed_fs feed(storage::posix_fs());
  feed.watch(dir.path());
  put(feed, dir.file("a.jsonl"), "one\n");
  put(feed, dir.file("b.jsonl"), "two\n");
  dir_listing picture;
  (void)feed.take(dir.path());
  REQUIRE(picture.rescan(feed, dir.path(), 1000).ok());
  CHECK(picture.valid());
  CHECK(picture.scanned_at() == 1000);
  REQUIRE(picture.files().size() == 2);

  put(feed, dir.file("a.jsonl"), "grown\n");                       // size changes
  REQUIRE(feed.rename(dir.file("b.jsonl"), dir.file("b.jsonl.reset.x")).ok());  // moved
  put(feed, dir.file("c.jsonl"), "new\n");                         // created
  REQUIRE(storage::posix_fs().mkdir(dir.file("d"), 0700).ok());    // a dir is not a file
  auto changed = feed.take(dir.path());
  REQUIRE(changed.has_value());
  changed->insert("d");
  REQUIRE(picture.refresh(feed, dir.path(), *changed).ok());

  auto full = scan_sessions_dir(storage::posix_fs(), dir.path());
  REQUIRE(full.ok());
  CHECK(describe(picture.files()) == describe(*full));
  CHECK(picture.files().size() == 3);
  CHECK(picture.scanned_at() == 1000);  // a refresh is not a full scan
}

TEST_CASE("dir_listing: a change made around the feed shows only at the next full scan") {
  testing::temp_dir dir;
  storage::change_feed_fs feed(storage::posix_fs());
  feed.watch(dir.path());
  dir_listing picture;
  REQUIRE(picture.rescan(feed, dir.path(), 0).ok());
  put(storage::posix_fs(), dir.file("outside.jsonl"), "x\n");  // not through the feed
  auto changed = feed.take(dir.path());
  REQUIRE(changed.has_value());
  CHECK(changed->empty());
  REQUIRE(picture.refresh(feed, dir.path(), *changed).ok());
  CHECK(picture.files().empty());
  REQUIRE(picture.rescan(feed, dir.path(), 5).ok());
  REQUIRE(picture.files().size() == 1);
  CHECK(picture.files()[0].name == "outside.jsonl");
}
