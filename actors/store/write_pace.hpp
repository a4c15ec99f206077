// write_pace: how long a row change may wait before sessions.json is written again [SPEC §1.1].
// Three bounds, the largest wins:
// - the window, storage.storeFlushWindowMs: the age of the file readers see;
// - 4x the last write's duration (real time only; the store actor measures it), so writing
//   never takes more than a fifth of the store's time however large the file grows;
// - durability batch only, the rewrite rate (storage.storeRewriteBytesPerSec): the file is
//   rewritten whole, so a file of B bytes waits B / rate seconds, at most max_lazy_ms (the
//   commit log's checkpoint interval, storage.commitLogCheckpointIntervalMs). With the
//   commit log holding every row change durably the file is the readers' view and the replay's
//   starting point, not the only copy; without the rate a 100,000-row store (~110 MB of 1.1 KB
//   rows) written every 5 s is ~22 MB/s of disk writes for a few rows changed. With the default
//   (256 KiB/s) a 1 MiB file still follows the 5 s window, a 12 MiB one waits 48 s, one of 15 MiB
//   or more 60 s (the commit log's checkpoint interval). A log that waits to be dropped asks
//   for the write (checkpt) and gets it with the window alone (window_wait_ms).
// Under virtual time the simulator keeps the same pace in virtual time (sim/clock_driver), with
// no duration term. Plain arithmetic: no CAF, no clock.
#pragma once
#include <algorithm>
#include <cstdint>

namespace sessionrt::actors {

inline constexpr std::uint64_t kStoreRewriteBytesPerSec = 256u << 10;

struct write_pace {
  std::int64_t window_ms = 0;
  // 0: the file is written with the window alone (durability none / sync: it is the only copy).
  std::uint64_t rewrite_bytes_per_sec = 0;
  std::int64_t max_lazy_ms = 0;  // the rate's cap; 0: the rate is not applied

  // `file_bytes`: the size of the file the last write left; `last_write_ms`: how long that
  // write took (0 under virtual time).
  std::int64_t wait_ms(std::uint64_t file_bytes, std::int64_t last_write_ms = 0) const {
    std::int64_t wait = window_wait_ms(last_write_ms);
    if (rewrite_bytes_per_sec > 0 && max_lazy_ms > 0) {
      // In whole ms, rounded up; the cap first, so a huge file cannot overflow the product.
      const auto cap = static_cast<std::uint64_t>(max_lazy_ms);
      const std::uint64_t capped_bytes = std::min<std::uint64_t>(file_bytes, cap * rewrite_bytes_per_sec / 1000 + 1);
      const auto by_size = static_cast<std::int64_t>(
          std::min<std::uint64_t>((capped_bytes * 1000 + rewrite_bytes_per_sec - 1) / rewrite_bytes_per_sec, cap));
      wait = std::max(wait, by_size);
    }
    return wait;
  }
  // The window and the duration's stretch alone: the wait when the commit log asks for a write
  // to drop a log file (the rate trades the readers' freshness for disk writes; it must not
  // keep logs on disk for a minute under heavy traffic).
  std::int64_t window_wait_ms(std::int64_t last_write_ms = 0) const { return std::max(window_ms, 4 * last_write_ms); }
};

}  // namespace sessionrt::actors
