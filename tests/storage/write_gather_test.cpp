// fs::write_gather: many small texts written in order as if joined (sessions.json's rows, handed
// on without a copy into one buffer). posix_fs's writev and memory_fs's own against the joined
// text; a layer that overrides only write() still sees every byte (the default joins); the
// layers of a simulation keep their bookkeeping (power_loss_fs counts the bytes as unsynced).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <random>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/forwarding_fs.hpp"
#include "storage/fs.hpp"
#include "storage/gather_cursor.hpp"
#include "storage/memory_fs.hpp"
#include "storage/power_loss_fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

// `count` pieces of 0-40 bytes (about one in eight empty), and the text they make.
struct drawn {
  std::vector<std::string> texts;
  std::vector<std::string_view> pieces;
  std::string joined;
};
drawn draw(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  drawn d;
  d.texts.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t n = rng() % 8 == 0 ? 0 : rng() % 41;
    std::string t;
    for (std::size_t k = 0; k < n; ++k) t += static_cast<char>('a' + rng() % 26);
    d.texts.push_back(std::move(t));
  }
  for (const auto& t : d.texts) d.pieces.push_back(t), d.joined += t;
  return d;
}

std::string contents(storage::fs& f, const std::string& path) {
  auto fd = f.open(path, O_RDONLY, 0);
  REQUIRE(fd.ok());
  auto all = storage::pread_all(f, *fd, 1 << 24, 0);
  REQUIRE(f.close(*fd).ok());
  REQUIRE(all.ok());
  return *all;
}

// Overrides only write(): counts the bytes and calls, and fails with ENOSPC once `limit`
// bytes went through.
class write_counter final : public storage::forwarding_fs {
 public:
  using forwarding_fs::forwarding_fs;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override {
    ++calls;
    if (bytes + n > limit) return storage::errno_status(ENOSPC, "write", "");
    bytes += n;
    return inner_.write(fd, data, n);
  }
  std::size_t calls = 0, bytes = 0, limit = ~std::size_t(0);
};

}  // namespace

TEST_CASE("write_gather: more pieces than one writev takes, on disk and in memory, give the joined text") {
  testing::temp_dir dir;
  manual_clock clk(0);
  storage::memory_fs mem(clk);
  for (std::size_t count : {std::size_t(1), std::size_t(3), std::size_t(1023), std::size_t(1024), std::size_t(1025),
                            std::size_t(5000)}) {
    const drawn d = draw(count, count);
    INFO(count << " pieces, " << d.joined.size() << " bytes");
    for (storage::fs* f : {&storage::posix_fs(), static_cast<storage::fs*>(&mem)}) {
      const std::string path = f == &mem ? "/g" : dir.file("g");
      auto fd = f->open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      REQUIRE(fd.ok());
      REQUIRE(storage::write_all(*f, *fd, "head:", 5).ok());  // from the file position on
      f->size_hint(*fd, d.joined.size() + 5);
      REQUIRE(f->write_gather(*fd, d.pieces).ok());
      REQUIRE(f->close(*fd).ok());
      CHECK(contents(*f, path) == "head:" + d.joined);
    }
  }
  // O_APPEND: from the end, whatever the position.
  auto fd = mem.open("/a", O_RDWR | O_CREAT | O_APPEND, 0600);
  REQUIRE(fd.ok());
  REQUIRE(storage::write_all(mem, *fd, "12345", 5).ok());
  const std::vector<std::string_view> two{"ab", "cd"};
  REQUIRE(mem.write_gather(*fd, two).ok());
  REQUIRE(mem.close(*fd).ok());
  CHECK(contents(mem, "/a") == "12345abcd");
  // A descriptor open read-only refuses, as write() does.
  auto ro = mem.open("/a", O_RDONLY, 0);
  REQUIRE(ro.ok());
  CHECK(mem.write_gather(*ro, two).code() == errc::io_error);
  REQUIRE(mem.close(*ro).ok());
}

TEST_CASE("write_gather: a layer that overrides only write() sees every byte, and its failure is returned") {
  manual_clock clk(0);
  storage::memory_fs mem(clk);
  const drawn d = draw(2000, 7);
  write_counter counter(mem);
  auto fd = counter.open("/c", O_WRONLY | O_CREAT, 0600);
  REQUIRE(fd.ok());
  REQUIRE(counter.write_gather(*fd, d.pieces).ok());
  CHECK(counter.bytes == d.joined.size());
  CHECK(counter.calls == 1);  // joined once, then written
  REQUIRE(counter.close(*fd).ok());
  CHECK(contents(mem, "/c") == d.joined);

  counter.limit = counter.bytes + 10;  // the disk fills
  auto again = counter.open("/c", O_WRONLY | O_APPEND, 0600);
  REQUIRE(again.ok());
  CHECK(counter.write_gather(*again, d.pieces).code() == errc::no_space);
  REQUIRE(counter.close(*again).ok());
  CHECK(contents(mem, "/c") == d.joined);  // nothing written past what was there
}

TEST_CASE("write_gather: power_loss_fs counts gathered bytes as unsynced, and a power loss tears them") {
  manual_clock clk(0);
  const drawn d = draw(400, 11);
  REQUIRE(d.joined.size() > 100);
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    storage::memory_fs mem(clk);
    storage::power_loss_fs f(mem, seed, /*forward_syncs=*/false);
    auto dirfd = f.open("/", O_RDONLY | O_DIRECTORY, 0);
    auto fd = f.open("/t", O_WRONLY | O_CREAT | O_APPEND, 0600);
    REQUIRE(fd.ok());
    REQUIRE(dirfd.ok());
    REQUIRE(storage::write_all(f, *fd, "synced", 6).ok());
    REQUIRE(f.fdatasync(*fd).ok());
    REQUIRE(f.fsync(*dirfd).ok());
    REQUIRE(f.write_gather(*fd, d.pieces).ok());
    CHECK(f.unsynced_bytes() == d.joined.size());
    REQUIRE(f.close(*fd).ok());
    REQUIRE(f.close(*dirfd).ok());
    auto rep = f.power_loss();
    REQUIRE(rep.ok());
    const std::string left = contents(mem, "/t");
    CHECK(left.size() >= 6);
    CHECK(left.size() < 6 + d.joined.size());  // the unsynced write never survives whole
    CHECK(left == ("synced" + d.joined).substr(0, left.size()));
    CHECK(rep->bytes_dropped == 6 + d.joined.size() - left.size());
  }
}

TEST_CASE("gather_cursor: a write that stops anywhere resumes at the next byte of the joined text") {
  const drawn d = draw(300, 3);
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    storage::gather_cursor at;
    std::string rebuilt;
    while (!at.done(d.pieces)) {
      // What a short writev of the rest could take: 0 up to all of it.
      std::size_t left = 0;
      for (std::size_t i = at.next; i < d.pieces.size(); ++i) left += i == at.next ? at.rest(d.pieces).size() : d.pieces[i].size();
      const std::size_t w = left == 0 ? 0 : rng() % (left + 1);
      const std::size_t before = rebuilt.size();
      for (std::size_t i = at.next, taken = 0; i < d.pieces.size() && taken < w; ++i) {
        const std::string_view p = i == at.next ? at.rest(d.pieces) : d.pieces[i];
        const std::size_t k = std::min(p.size(), w - taken);
        rebuilt.append(p.substr(0, k));
        taken += k;
      }
      const bool moved = at.advance(d.pieces, w);
      REQUIRE(rebuilt.size() == before + w);
      // No byte and no empty piece passed over: the caller's "wrote 0 bytes".
      if (!moved) REQUIRE(w == 0);
      if (!at.done(d.pieces)) CHECK(at.skip < d.pieces[at.next].size() + (d.pieces[at.next].empty() ? 1 : 0));
    }
    CHECK(rebuilt == d.joined);
  }
}
