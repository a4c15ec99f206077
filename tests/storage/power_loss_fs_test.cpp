// power_loss_fs: a power loss keeps what was synced, tears the last unsynced write, and drops
// new names whose directory was never synced; the dead process's calls fail.
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <string>

#include "storage/faulty_fs.hpp"
#include "storage/fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using sessionrt::storage::power_loss_fs;

namespace {
int open_append(storage::fs& f, const std::string& path) {
  auto fd = f.open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd.ok());
  return *fd;
}
void put(storage::fs& f, int fd, const std::string& text) { REQUIRE(storage::write_all(f, fd, text.data(), text.size()).ok()); }
void sync_dir(storage::fs& f, const std::string& dir) {
  auto fd = f.open(dir, O_RDONLY | O_DIRECTORY, 0);
  REQUIRE(fd.ok());
  REQUIRE(f.fsync(*fd).ok());
  REQUIRE(f.close(*fd).ok());
}
}  // namespace

TEST_CASE("power_loss_fs: synced bytes survive, the unsynced tail is cut inside the last write") {
  testing::temp_dir dir;
  const std::string path = dir.file("t.jsonl");
  const std::string synced(100, 'a'), w1(50, 'b'), w2(50, 'c');
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    power_loss_fs f(storage::posix_fs(), seed);
    (void)storage::posix_fs().unlink(path);
    int fd = open_append(f, path);
    put(f, fd, synced);
    REQUIRE(f.fdatasync(fd).ok());
    sync_dir(f, dir.path());
    put(f, fd, w1);
    put(f, fd, w2);
    CHECK(f.unsynced_bytes() == 100);
    REQUIRE(f.close(fd).ok());
    auto rep = f.power_loss();
    REQUIRE(rep.ok());
    const std::string left = testing::read_text(path);
    CHECK(left.size() >= synced.size());
    CHECK(left.size() < synced.size() + w1.size() + w2.size());  // the last write never whole
    CHECK(left == (synced + w1 + w2).substr(0, left.size()));
    CHECK(rep->files_torn == 1);
    CHECK(rep->bytes_dropped == synced.size() + w1.size() + w2.size() - left.size());
  }
}

TEST_CASE("power_loss_fs: syncfs makes every file durable") {
  testing::temp_dir dir;
  power_loss_fs f(storage::posix_fs(), 7);
  int a = open_append(f, dir.file("a"));
  int b = open_append(f, dir.file("b"));
  put(f, a, "alpha\n");
  put(f, b, "beta\n");
  REQUIRE(f.syncfs(a).ok());
  REQUIRE(f.close(a).ok());
  REQUIRE(f.close(b).ok());
  CHECK(f.unsynced_bytes() == 0);
  auto rep = f.power_loss();
  REQUIRE(rep.ok());
  CHECK(rep->files_torn == 0);
  CHECK(rep->entries_vanished == 0);
  CHECK(testing::read_text(dir.file("a")) == "alpha\n");
  CHECK(testing::read_text(dir.file("b")) == "beta\n");
}

TEST_CASE("power_loss_fs: without forwarding, syncs reach only the model, which still keeps what they synced") {
  testing::temp_dir dir;
  storage::faulty_fs counted(storage::posix_fs());
  power_loss_fs f(counted, 3, /*forward_syncs=*/false);
  int a = open_append(f, dir.file("a"));
  int b = open_append(f, dir.file("b"));
  put(f, a, "synced\n");
  REQUIRE(f.fdatasync(a).ok());
  REQUIRE(f.fsync(a).ok());
  sync_dir(f, dir.path());
  put(f, a, "torn tail\n");
  put(f, b, "all unsynced\n");
  CHECK(counted.count(storage::fs_op::fdatasync) == 0);
  CHECK(counted.count(storage::fs_op::fsync) == 0);
  CHECK(f.unsynced_bytes() == std::string("torn tail\nall unsynced\n").size());
  REQUIRE(f.close(a).ok());
  REQUIRE(f.close(b).ok());
  REQUIRE(f.power_loss().ok());
  const std::string after = testing::read_text(dir.file("a"));
  CHECK(after.rfind("synced\n", 0) == 0);
  CHECK(after.size() < std::string("synced\ntorn tail\n").size());
  CHECK(testing::read_text(dir.file("b")).size() < std::string("all unsynced\n").size());
}

TEST_CASE("power_loss_fs: new names in an unsynced directory may vanish, synced ones stay") {
  testing::temp_dir dir;
  REQUIRE(storage::posix_fs().mkdir(dir.file("kept"), 0700).ok());
  REQUIRE(storage::posix_fs().mkdir(dir.file("loose"), 0700).ok());
  power_loss_fs f(storage::posix_fs(), 3);
  for (int i = 0; i < 16; ++i) {
    for (const char* sub : {"kept", "loose"}) {
      int fd = open_append(f, dir.file(std::string(sub) + "/" + std::to_string(i)));
      put(f, fd, "x");
      REQUIRE(f.fdatasync(fd).ok());
      REQUIRE(f.close(fd).ok());
    }
  }
  sync_dir(f, dir.file("kept"));
  auto rep = f.power_loss();
  REQUIRE(rep.ok());
  CHECK(testing::list_names(dir.file("kept")).size() == 16);
  const auto loose = testing::list_names(dir.file("loose"));
  CHECK(loose.size() + rep->entries_vanished == 16);
  CHECK(rep->entries_vanished > 0);
  CHECK(loose.size() > 0);
  for (const auto& p : rep->vanished) CHECK(p.find("/loose/") != std::string::npos);
}

TEST_CASE("power_loss_fs: a killed process's calls fail with EIO until the power loss is applied") {
  testing::temp_dir dir;
  power_loss_fs f(storage::posix_fs(), 1);
  int fd = open_append(f, dir.file("a"));
  put(f, fd, "one\n");
  REQUIRE(f.fdatasync(fd).ok());
  sync_dir(f, dir.path());  // else the new name itself may vanish
  f.kill();
  auto w = f.write(fd, "two\n", 4);
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().code() == errc::io_error);
  CHECK(w.error().message().find("power lost") != std::string::npos);
  CHECK_FALSE(f.open(dir.file("b"), O_WRONLY | O_CREAT, 0600).ok());
  CHECK(f.close(fd).ok());
  REQUIRE(f.power_loss().ok());
  CHECK_FALSE(f.dead());
  int again = open_append(f, dir.file("a"));
  put(f, again, "three\n");
  REQUIRE(f.close(again).ok());
  CHECK(testing::read_text(dir.file("a")) == "one\nthree\n");
  CHECK(f.bytes_written() == 10);
}
