// power_loss_fs: an fs that forwards to another and remembers, per file, how much of it is
// durable, so that a test or a simulation can cut the power (as LevelDB's fault-injection env
// and SQLite's crash VFS do).
// - A file's durable length is what it had when first seen (files present before are durable)
//   and what it had at its last fsync / fdatasync, or at a syncfs of anything; writes are
//   taken as appends (storage/ only appends or writes fresh files), ftruncate sets the length.
//   pwrite and fallocate count only what they add past the end: an overwrite inside the file
//   (the commit log's preallocated or recycled space) is not modelled, it survives whole.
//   Both lengths belong to the file (its inode) and stay with it through a rename.
// - A directory entry created (open O_CREAT of a new name, rename or link to a new name) is
//   durable once its directory is fsync'd (or at a syncfs).
// - kill(): the process is dead; every later call except close fails with EIO naming the power
//   loss. The files are untouched until power_loss().
// - power_loss(): what a reboot finds. Every file with bytes past its durable length keeps that
//   length plus a torn prefix of the rest, strictly shorter than the rest (the last unsynced
//   write never survives whole); each new file entry whose directory was not synced vanishes
//   with probability 1/2. Draws come from `seed`, in path order, so one seed gives one outcome.
//   Then the tracking restarts (everything on disk counts as durable) and calls work again.
// - forward_syncs false (a simulation): fsync, fdatasync and syncfs are tracked but not passed
//   on. The power loss is the model's, so a real sync would add only the disk's wait.
// Thread-safe (one mutex); the runtime's threads may call it concurrently.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/killable_fs.hpp"

namespace sessionrt::storage {

struct power_loss_report {
  std::size_t files_torn = 0;        // files cut back to their durable length (+ a torn prefix)
  std::uint64_t bytes_dropped = 0;   // unsynced bytes that did not survive
  std::size_t entries_vanished = 0;  // new names whose directory was never synced
  std::vector<std::string> torn;     // the paths cut, in path order
  std::vector<std::string> vanished;
};

class power_loss_fs final : public killable_fs {
 public:
  explicit power_loss_fs(fs& inner, std::uint64_t seed = 1, bool forward_syncs = true)
      : killable_fs(inner, "(power lost)"), rng_(seed), forward_syncs_(forward_syncs) {}

  void kill() { die(); }
  // Applies the power loss to the files (through the inner fs) and revives this fs.
  result<power_loss_report> power_loss();
  // Bytes the inner fs accepted through write(), since construction.
  std::uint64_t bytes_written() const { return bytes_written_.load(); }
  // Unsynced bytes now, over every tracked file (for tests and reports).
  std::uint64_t unsynced_bytes() const;

  result<int> open(const std::string& path, int flags, mode_t mode) override;
  status close(int fd) override;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override;
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override;
  status write_gather(int fd, std::span<const std::string_view> pieces) override;
  status fallocate(int fd, std::uint64_t offset, std::uint64_t length) override;
  status fsync(int fd) override;
  status fdatasync(int fd) override;
  status syncfs(int fd) override;
  status ftruncate(int fd, std::uint64_t length) override;
  status rename(const std::string& from, const std::string& to) override;
  status link(const std::string& from, const std::string& to) override;
  status unlink(const std::string& path) override;
  status mkdir(const std::string& path, mode_t mode) override;

 private:
  using inode = std::pair<std::uint64_t, std::uint64_t>;  // dev, ino
  struct file_state {
    std::uint64_t size = 0, durable = 0;
    std::set<std::string> names;
  };
  struct open_fd {
    inode node;
    std::string path;
    bool dir = false;
  };
  void name_created(const std::string& path);  // under mu_
  void name_gone(const std::string& path);     // under mu_
  void grew_to(int fd, std::uint64_t end);     // a write or an allocation reached `end`; takes mu_
  void appended(int fd, std::uint64_t n);      // n bytes written at the end through fd; takes mu_
  std::uint64_t draw(std::uint64_t bound);     // [0, bound), under mu_

  std::atomic<std::uint64_t> bytes_written_{0};
  mutable std::mutex mu_;
  std::uint64_t rng_;
  const bool forward_syncs_;
  // Hashed (a simulated month looks names up in directories of 100,000s of files at every
  // open); power_loss() sorts what it walks, so one seed still gives one outcome.
  struct inode_hash {
    std::size_t operator()(const inode& n) const noexcept { return std::hash<std::uint64_t>{}(n.first * 31 + n.second); }
  };
  std::unordered_map<int, open_fd> fds_;
  std::unordered_map<inode, file_state, inode_hash> files_;
  std::unordered_set<inode, inode_hash> written_;  // files written since the last syncfs: what a syncfs makes durable
  std::unordered_map<std::string, inode> by_name_;
  std::unordered_map<std::string, std::unordered_set<std::string>> new_names_;  // dir -> names created since its sync
};

}  // namespace sessionrt::storage
