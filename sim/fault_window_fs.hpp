// fault_window_fs: an fs that makes storage fail during spans of simulated time (a scenario's
// fault steps). Each window has a kind (ENOSPC, EIO, short writes), a target (any file, the
// sessions.json store and its temp files, or transcripts) and [from, until) in the clock's
// time. Inside a window:
// - enospc: writes and creating files on the target fail with ENOSPC;
// - eio: writes, fsync / fdatasync / syncfs and renames onto the target fail with EIO;
// - short_write: writes on the target write at most half of what is asked (storage loops).
// Every injected failure is counted per window (the report's cost of the fault). Paths are
// tracked per descriptor for the target test.
// Virtual mtimes (stamp_mtimes, for an inner fs on disk): a file written, created, truncated or
// renamed through this fs reports the clock's time of that change as its mtime / ctime (stat,
// lstat, fstat), so rules that order files by age (the disk budget evicts the oldest first)
// follow virtual time, not the order in which the machine's threads happened to write. An inner
// memory_fs on the same clock stamps its files so already: without stamp_mtimes this fs keeps no
// per-path times and adds no lookups. A virtual mtime belongs to the file, not to a name: its
// names (rename, link) and its open descriptors share it, so fstat on a descriptor opened under
// a temp name that was since renamed answers what stat of the new name answers, as a real file
// system does (a store that compares the two would otherwise take its own write for another
// program's). Thread-safe.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/clock.hpp"
#include "sim/scenario.hpp"
#include "storage/forwarding_fs.hpp"

namespace sessionrt::sim {

class fault_window_fs final : public storage::forwarding_fs {
 public:
  fault_window_fs(storage::fs& inner, const clock& time, bool stamp_mtimes)
      : forwarding_fs(inner), time_(time), stamp_(stamp_mtimes) {}

  // Returns the window's index (for injected()).
  std::size_t add_window(const fault_spec& spec, std::int64_t from_ms);
  std::int64_t injected(std::size_t window) const;
  // Syncs running now: a turn waiting on the disk, which the engine waits for however long
  // the disk takes (a busy disk is not a session stuck on a timer of its own).
  int syncs_in_flight() const { return syncs_.load(); }

  result<int> open(const std::string& path, int flags, mode_t mode) override;
  status close(int fd) override;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override;
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override;  // as write()
  // With a window declared: joined and passed to write() (each meets the windows as before).
  status write_gather(int fd, std::span<const std::string_view> pieces) override;
  status fsync(int fd) override;
  status fdatasync(int fd) override;
  status syncfs(int fd) override;
  status rename(const std::string& from, const std::string& to) override;
  status link(const std::string& from, const std::string& to) override;
  status unlink(const std::string& path) override;
  status ftruncate(int fd, std::uint64_t length) override;
  result<storage::file_info> fstat(int fd) override;
  result<storage::file_info> stat(const std::string& path) override;
  result<storage::file_info> lstat(const std::string& path) override;

 private:
  // A file's virtual mtime (ms), shared by its names and descriptors.
  using mtime_cell = std::shared_ptr<std::int64_t>;
  struct open_fd {
    std::string path;  // as opened (the fault targets match on it)
    mtime_cell mtime;  // with stamp_: the file's, once it has one
  };
  void touch(const std::string& path);  // under mu_
  void touch(open_fd& fd);              // under mu_
  void stamp_fd(int fd);                // with stamp_: touch(fd's file) now; takes mu_
  static result<storage::file_info> with_mtime(result<storage::file_info> info, const mtime_cell& mtime);
  struct window {
    fault_spec spec;
    std::int64_t from = 0, until = 0;
    std::int64_t injected = 0;
  };
  // The active window whose target matches `path` and whose kind is in `kinds`, or nullptr.
  window* active(const std::string& path, std::initializer_list<fault_kind> kinds);
  std::string path_of(int fd) const;
  template <class Inner>
  result<std::size_t> faulted_write(int fd, std::size_t n, Inner&& inner);

  const clock& time_;
  const bool stamp_;
  mutable std::mutex mu_;
  std::vector<window> windows_;
  // Hashed: looked up at every call, never walked.
  std::unordered_map<int, open_fd> fds_;
  std::unordered_map<std::string, mtime_cell> mtimes_;  // with stamp_: path -> its file's virtual mtime
  std::atomic<bool> any_{false};
  std::atomic<int> syncs_{0};
  struct syncing {
    explicit syncing(std::atomic<int>& n) : n_(n) { ++n_; }
    ~syncing() { --n_; }
    std::atomic<int>& n_;
  };
};

}  // namespace sessionrt::sim
