// write_pace: the largest of the window, 4x the last write's duration and (durability batch)
// the file's size at the rewrite rate, the last capped at max_lazy_ms.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "actors/runtime_settings.hpp"
#include "actors/store/write_pace.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

TEST_CASE("write_pace: a small file follows the window, a large one waits its size at the rate", "[write_pace]") {
  write_pace p;
  p.window_ms = 5000;
  p.rewrite_bytes_per_sec = 256u << 10;
  p.max_lazy_ms = 60000;
  CHECK(p.wait_ms(0) == 5000);
  CHECK(p.wait_ms(1u << 20) == 5000);              // 4 s at the rate: the window is longer
  CHECK(p.wait_ms(12u << 20) == 48000);            // 12 MiB at 256 KiB/s
  CHECK(p.wait_ms((12u << 20) + 1) == 48001);      // rounded up, never under the rate
  CHECK(p.wait_ms(15u << 20) == 60000);            // at the cap
  CHECK(p.wait_ms(std::uint64_t(110) * 1000 * 1000) == 60000);
  CHECK(p.wait_ms(std::numeric_limits<std::uint64_t>::max()) == 60000);  // no overflow
  SECTION("a slow write stretches it further, past the cap") {
    CHECK(p.wait_ms(12u << 20, 20000) == 80000);
    CHECK(p.wait_ms(0, 100) == 5000);
  }
  SECTION("a window set longer than the cap is kept") {
    p.window_ms = 600000;
    CHECK(p.wait_ms(std::uint64_t(1) << 30) == 600000);
  }
}

TEST_CASE("write_pace: without a rate only the window and the write's duration count", "[write_pace]") {
  write_pace p;
  p.window_ms = 50;
  CHECK(p.wait_ms(std::uint64_t(1) << 30) == 50);
  CHECK(p.wait_ms(std::uint64_t(1) << 30, 30) == 120);
}

TEST_CASE("write_pace: the rate applies with durability batch only, where the commit log holds the rows",
          "[write_pace]") {
  storage_settings s;
  CHECK(s.durability == storage::durability::batch);
  CHECK(store_write_pace(s).window_ms == kStoreMaxAgeBatchMs);
  CHECK(store_write_pace(s).rewrite_bytes_per_sec == kStoreRewriteBytesPerSec);
  CHECK(store_write_pace(s).max_lazy_ms == 60000);  // the commit log's checkpoint interval
  CHECK(store_write_pace(s).wait_ms(std::uint64_t(1) << 30) == 60000);
  s.commit_log_checkpoint_interval_ms = 20000;
  CHECK(store_write_pace(s).wait_ms(std::uint64_t(1) << 30) == 20000);
  s.store_rewrite_bytes_per_sec = 0;
  CHECK(store_write_pace(s).wait_ms(std::uint64_t(1) << 30) == kStoreMaxAgeBatchMs);
  s.store_rewrite_bytes_per_sec = 1000;
  s.durability = storage::durability::sync;
  CHECK(store_write_pace(s).window_ms == kStoreFlushWindowMs);
  CHECK(store_write_pace(s).rewrite_bytes_per_sec == 0);
  s.durability = storage::durability::none;
  CHECK(store_write_pace(s).wait_ms(std::uint64_t(1) << 30) == kStoreFlushWindowMs);
}
