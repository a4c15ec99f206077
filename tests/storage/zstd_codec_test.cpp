// storage/zstd_codec: the one zstd codec (in memory and between descriptors).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include "storage/durable_file.hpp"
#include "storage/zstd_codec.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::storage;

namespace {

// Lines that compress as a transcript does: repeated keys, varying text.
std::string sample(std::size_t lines) {
  std::string out;
  for (std::size_t i = 0; i < lines; ++i)
    out += "{\"type\":\"message\",\"id\":\"" + std::to_string(10000000 + i) + "\",\"message\":{\"role\":\"user\",\"content\":\"line " +
           std::to_string(i * 7919 % 1000) + " of the sample\"}}\n";
  return out;
}

int open_fd(const std::string& path, int flags) {
  auto fd = posix_fs().open(path, flags, 0600);
  REQUIRE(fd.ok());
  return *fd;
}

}  // namespace

TEST_CASE("zstd codec: one frame and a stream round-trip in memory, a torn one is refused") {
  const std::string text = sample(500);
  const std::string z = compress(text, 3);
  REQUIRE_FALSE(z.empty());
  CHECK(z.size() < text.size() / 4);
  auto exact = decompress_exact(z, text.size());
  REQUIRE(exact.ok());
  CHECK(*exact == text);
  CHECK(decompress_exact(z, text.size() - 1).error().code() == errc::corrupt);  // the size is checked
  auto stream = decompress_stream(z + compress("tail\n"), 1 << 20);             // two frames
  REQUIRE(stream.ok());
  CHECK(*stream == text + "tail\n");
  CHECK(decompress_stream(z.substr(0, z.size() / 2), 1 << 20).error().code() == errc::corrupt);
  CHECK(decompress_stream(z, 100).error().code() == errc::limit_exceeded);
}

TEST_CASE("zstd codec: a file compressed between descriptors inflates to the same bytes and verifies") {
  testing::temp_dir dir;
  const std::string text = sample(20000);  // a few MiB: more than one 1 MiB block
  testing::write_text(dir.file("raw"), text);
  int raw = open_fd(dir.file("raw"), O_RDONLY);
  int zst = open_fd(dir.file("raw.zst"), O_RDWR | O_CREAT | O_EXCL);
  auto n = compress_fd(posix_fs(), raw, text.size(), zst, 3);
  REQUIRE(n.ok());
  CHECK(n->raw_bytes == text.size());
  CHECK(n->compressed_bytes == posix_fs().fstat(zst)->size);
  auto same = verify_fd(posix_fs(), zst, raw, text.size());
  REQUIRE(same.ok());
  CHECK(same->raw_bytes == text.size());

  int back = open_fd(dir.file("back"), O_RDWR | O_CREAT | O_EXCL);
  auto d = decompress_fd(posix_fs(), zst, back, text.size());
  REQUIRE(d.ok());
  CHECK(testing::read_text(dir.file("back")) == text);
  CHECK(decompress_fd(posix_fs(), zst, back, text.size() - 1).error().code() == errc::limit_exceeded);
  auto head = decompress_fd_prefix(posix_fs(), zst, 100);
  REQUIRE(head.ok());
  CHECK(*head == text.substr(0, 100));

  // A copy that differs from the original by one byte does not verify.
  std::string other = text;
  other[text.size() / 2] ^= 1;
  testing::write_text(dir.file("other"), other);
  int o = open_fd(dir.file("other"), O_RDONLY);
  auto differs = verify_fd(posix_fs(), zst, o, text.size());
  REQUIRE_FALSE(differs.ok());
  CHECK(differs.error().code() == errc::corrupt);
  for (int fd : {raw, zst, back, o}) REQUIRE(posix_fs().close(fd).ok());
}

TEST_CASE("zstd codec: a torn or bit-flipped compressed file is refused by the decoder (checksum)") {
  testing::temp_dir dir;
  const std::string text = sample(3000);
  testing::write_text(dir.file("raw"), text);
  int raw = open_fd(dir.file("raw"), O_RDONLY);
  int zst = open_fd(dir.file("z"), O_RDWR | O_CREAT | O_EXCL);
  REQUIRE(compress_fd(posix_fs(), raw, text.size(), zst, 3).ok());
  const std::string z = testing::read_text(dir.file("z"));
  testing::write_text(dir.file("torn"), z.substr(0, z.size() - 3));
  std::string flipped = z;
  flipped[flipped.size() - 2] ^= 0x40;  // inside the checksum
  testing::write_text(dir.file("flipped"), flipped);
  for (const char* name : {"torn", "flipped"}) {
    INFO(name);
    int in = open_fd(dir.file(name), O_RDONLY);
    int out = open_fd(dir.file(std::string(name) + ".out"), O_RDWR | O_CREAT | O_EXCL);
    auto d = decompress_fd(posix_fs(), in, out, 1 << 30);
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().code() == errc::corrupt);
    REQUIRE(posix_fs().close(in).ok());
    REQUIRE(posix_fs().close(out).ok());
  }
  REQUIRE(posix_fs().close(raw).ok());
  REQUIRE(posix_fs().close(zst).ok());
}
