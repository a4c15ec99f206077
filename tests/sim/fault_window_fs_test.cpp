// fault_window_fs's virtual mtimes (stamp_mtimes, a simulation on disk) belong to the file, not
// to a name: a descriptor opened under a temp name that was then renamed into place answers the
// mtime stat gives for the new name, as a real file system does. The sessions.json store keeps
// the identity of its own write by fstat of that descriptor and compares it with stat of the
// path at every hand-edit check: if the two disagree, each of its own saves looks like another
// program's edit (it was read back and merged after every write of a simulation on disk).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "sim/fault_window_fs.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_store_file.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {
constexpr std::int64_t kT0 = 1791151200000;  // virtual: years before the machine's clock
}  // namespace

TEST_CASE("fault_window_fs: a file renamed into place answers one mtime by descriptor and by name") {
  testing::temp_dir dir;
  manual_clock clk(kT0);
  storage::fs& disk = storage::posix_fs();
  sim::fault_window_fs f(disk, clk, /*stamp_mtimes=*/true);
  const std::string path = dir.file("sessions.json");
  int fd = -1;
  storage::replace_options o;
  o.keep_fd = &fd;
  REQUIRE(storage::replace_file_atomic(f, path, "{}\n", o).ok());
  auto by_fd = f.fstat(fd);
  auto by_name = f.stat(path);
  REQUIRE(by_fd.ok());
  REQUIRE(by_name.ok());
  CHECK(by_name->mtime_ns == kT0 * 1'000'000);
  CHECK(by_fd->mtime_ns == by_name->mtime_ns);
  CHECK(by_fd->ino == by_name->ino);

  // A later write through the descriptor moves the time of the file under either name.
  clk.advance(5000);
  REQUIRE(storage::write_all(f, fd, "x", 1).ok());
  CHECK(f.stat(path)->mtime_ns == (kT0 + 5000) * 1'000'000);
  CHECK(f.fstat(fd)->mtime_ns == (kT0 + 5000) * 1'000'000);

  // Replaced by another file: the old descriptor keeps its file's time, the name the new one's.
  clk.advance(5000);
  REQUIRE(storage::replace_file_atomic(f, path, "{ }\n", {}).ok());
  CHECK(f.stat(path)->mtime_ns == (kT0 + 10000) * 1'000'000);
  CHECK(f.fstat(fd)->mtime_ns == (kT0 + 5000) * 1'000'000);
  REQUIRE(f.close(fd).ok());
}

TEST_CASE("fault_window_fs: the store's own saves are not taken for hand edits in a simulation on disk") {
  testing::temp_dir dir;
  manual_clock clk(kT0);
  storage::fs& disk = storage::posix_fs();
  sim::fault_window_fs f(disk, clk, /*stamp_mtimes=*/true);
  storage::session_store_file file(f, clk, dir.file("sessions.json"));
  for (int i = 0; i < 3; ++i) {
    session_entry e;
    e.set_session_id("id-" + std::to_string(i));
    e.set_updated_at(kT0 + i);
    file.store().upsert("agent:main:k" + std::to_string(i), e);
    file.note_changed("agent:main:k" + std::to_string(i));
    REQUIRE(file.save().ok());
    clk.advance(1000);
    auto seen = file.reload_if_changed();
    REQUIRE(seen.ok());
    CHECK_FALSE(seen->has_value());
  }
}

TEST_CASE("fault_window_fs: a gathered write meets the windows as one write() of the joined pieces") {
  manual_clock clk(kT0);
  storage::memory_fs mem(clk);
  sim::fault_window_fs f(mem, clk, /*stamp_mtimes=*/false);
  const std::vector<std::string> texts{"{", "\"a\": 1", ",", "\"b\": 2", "", "}\n"};
  const std::vector<std::string_view> pieces(texts.begin(), texts.end());
  auto write_file = [&](const std::string& path) {
    auto fd = f.open(path, O_WRONLY | O_TRUNC | (path == "/before" ? 0 : O_CREAT), 0600);
    REQUIRE(fd.ok());
    status st = f.write_gather(*fd, pieces);
    REQUIRE(f.close(*fd).ok());
    return st;
  };
  auto made = mem.open("/before", O_WRONLY | O_CREAT, 0600);
  REQUIRE(made.ok());
  REQUIRE(mem.close(*made).ok());
  REQUIRE(write_file("/before").ok());  // no window: straight through
  CHECK(*storage::read_file(mem, "/before", 1024) == "{\"a\": 1,\"b\": 2}\n");

  const std::size_t halving = f.add_window({sim::fault_kind::short_write, sim::fault_target::any, 60000}, kT0);
  REQUIRE(write_file("/short").ok());  // each write() halved, write_all loops: all of it lands
  CHECK(*storage::read_file(mem, "/short", 1024) == "{\"a\": 1,\"b\": 2}\n");
  CHECK(f.injected(halving) == 5);  // 16 bytes in five write() calls (8, 4, 2, 1, 1), each met

  clk.advance(60000);
  const std::size_t full = f.add_window({sim::fault_kind::enospc, sim::fault_target::any, 60000}, kT0 + 60000);
  CHECK(write_file("/before").code() == errc::no_space);  // an existing file: the open is no create
  CHECK(f.injected(full) == 1);
}
