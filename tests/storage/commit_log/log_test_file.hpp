// One log file in memory for the commit-log format tests (log_format_test, log_recycle_test):
// its bytes, a way to replace them, and every record a reader returns with where it stopped.
#pragma once
#include <catch2/catch.hpp>
#include <fcntl.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "messages/clock.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"

namespace sessionrt::storage::commit_log::testing {

// n lowercase letters, the same for the same seed.
inline std::string payload(std::size_t n, int seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

struct log_file {
  manual_clock clk{1000};
  memory_fs mem{clk};
  std::string path = "/log";
  int fd = -1;
  // extra_flags: O_APPEND for a writer that appends, none for one that writes at offsets (v3).
  explicit log_file(int extra_flags = 0) {
    auto f = mem.open(path, O_RDWR | O_CREAT | extra_flags, 0600);
    REQUIRE(f.ok());
    fd = *f;
  }
  std::string bytes() { return *pread_all(mem, fd, mem.fstat(fd)->size, 0); }
  void set(const std::string& text) {
    REQUIRE(mem.ftruncate(fd, 0).ok());
    REQUIRE(pwrite_all(mem, fd, text.data(), text.size(), 0).ok());
  }
  // Every record, and where reading stopped; `number`: the log's number, as the file name gives it.
  std::vector<std::string> read_all(log_stop* stop = nullptr, std::vector<std::uint64_t>* offsets = nullptr,
                                    std::optional<std::uint64_t> number = std::nullopt) {
    log_reader r(mem, fd, path, number);
    std::vector<std::string> out;
    std::string rec;
    std::uint64_t off = 0;
    while (r.next(rec, &off)) {
      out.push_back(rec);
      if (offsets) offsets->push_back(off);
    }
    if (stop) *stop = r.stop();
    return out;
  }
};

}  // namespace sessionrt::storage::commit_log::testing
