// faulty_fs: an fs that forwards to another and injects failures, for tests.
// - fail_nth(op, n, err): the n-th call (1-based, counted from now) of `op` fails with errno `err`;
// - space_left(bytes): writes beyond that many further bytes fail with ENOSPC (the write that
//   crosses the limit is short, as a real full disk does);
// - short_writes(true): every write writes at most half of what is asked (at least 1 byte);
// - crash_at_write(n, keep): the n-th write puts only `keep` bytes on disk, then the "process
//   is dead": every later call fails with EIO (killable_fs). What is on disk is what a kill -9
//   would leave.
// Calls it injects nothing into are killable_fs's: forwarded while alive.
// Not thread-safe; one test drives it.
#pragma once
#include <cstdint>
#include <map>

#include "storage/killable_fs.hpp"

namespace sessionrt::storage {

enum class fs_op { open, write, fsync, fdatasync, syncfs, rename, link, unlink, ftruncate, mkdir };

class faulty_fs final : public killable_fs {
 public:
  explicit faulty_fs(fs& inner) : killable_fs(inner, "(crashed)") {}

  void fail_nth(fs_op op, int nth, int err) { rules_[op] = {count(op) + nth, err}; }
  void space_left(std::uint64_t bytes) { space_left_ = bytes; has_space_limit_ = true; }
  void short_writes(bool on) { short_writes_ = on; }
  void crash_at_write(int nth, std::size_t keep_bytes) {
    crash_write_ = count(fs_op::write) + nth;
    crash_keep_ = keep_bytes;
  }
  bool crashed() const { return dead(); }
  int count(fs_op op) const {
    auto it = counts_.find(op);
    return it == counts_.end() ? 0 : it->second;
  }
  // Drops every rule and the crashed state; counts restart at zero.
  void clear() {
    counts_.clear();
    rules_.clear();
    has_space_limit_ = short_writes_ = false;
    crash_write_ = 0;
    revive();
  }

  result<int> open(const std::string& path, int flags, mode_t mode) override;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override;
  // Counted, failed and crashed as write() is (fs_op::write).
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override;
  status fsync(int fd) override;
  status fdatasync(int fd) override;
  status syncfs(int fd) override;
  status ftruncate(int fd, std::uint64_t length) override;
  status rename(const std::string& from, const std::string& to) override;
  status link(const std::string& from, const std::string& to) override;
  status unlink(const std::string& path) override;
  status mkdir(const std::string& path, mode_t mode) override;

 private:
  struct rule {
    int at = 0;
    int err = 0;
  };
  // Counts a call of `op`; returns the errno to fail it with, or 0.
  int step(fs_op op);
  template <class Put>
  result<std::size_t> faulted_write(const char* data, std::size_t n, Put put);

  std::map<fs_op, int> counts_;
  std::map<fs_op, rule> rules_;
  bool has_space_limit_ = false;
  std::uint64_t space_left_ = 0;
  bool short_writes_ = false;
  int crash_write_ = 0;
  std::size_t crash_keep_ = 0;
};

}  // namespace sessionrt::storage
