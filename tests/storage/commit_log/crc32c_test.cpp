// crc32c: the RFC 3720 (iSCSI) test vectors and LevelDB's, the hardware and table versions
// agree, extend() continues a checksum, mask() round-trips.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "storage/commit_log/crc32c.hpp"

using namespace sessionrt::storage;

TEST_CASE("crc32c gives the RFC 3720 test vectors") {
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  for (auto fn : {&crc32c::extend, &crc32c::extend_portable}) {
    CHECK(fn(0, zeros.data(), zeros.size()) == 0x8a9136aau);
    CHECK(fn(0, ones.data(), ones.size()) == 0x62a8ab43u);
    CHECK(fn(0, up.data(), up.size()) == 0x46dd794eu);
    CHECK(fn(0, down.data(), down.size()) == 0x113fdb5cu);
    CHECK(fn(0, "123456789", 9) == 0xe3069283u);
    CHECK(fn(0, "", 0) == 0u);
  }
  // LevelDB's iSCSI read command vector (48 bytes).
  const unsigned char cmd[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  CHECK(crc32c::value(reinterpret_cast<const char*>(cmd), 48) == 0xd9963a56u);
}

TEST_CASE("crc32c hardware and table versions agree at every length and split") {
  std::mt19937 rng(7);
  std::string data(1000, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (std::size_t n = 0; n <= data.size(); n += (n < 64 ? 1 : 37)) {
    const auto whole = crc32c::extend_portable(0, data.data(), n);
    REQUIRE(crc32c::value(data.data(), n) == whole);
    const std::size_t cut = n / 3;
    REQUIRE(crc32c::extend(crc32c::value(data.data(), cut), data.data() + cut, n - cut) == whole);
  }
  CHECK(crc32c::value("a", 1) != crc32c::value("foo", 3));
}

TEST_CASE("crc32c mask changes the value and unmask restores it") {
  const auto crc = crc32c::value("foo", 3);
  CHECK(crc32c::mask(crc) != crc);
  CHECK(crc32c::mask(crc32c::mask(crc)) != crc);
  CHECK(crc32c::unmask(crc32c::mask(crc)) == crc);
  CHECK(crc32c::unmask(crc32c::unmask(crc32c::mask(crc32c::mask(crc)))) == crc);
}
