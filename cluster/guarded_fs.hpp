// guarded_fs: one opened shard's files as everything that writes them sees them: its sessions
// (transcript appends, creation, repair, the turn's commit), its store actor (sessions.json),
// its commit log (the group commit's write and fdatasync, checkpoints) and its open
// (open_shard_state's recovery). Every call that changes the disk, or makes a change durable
// before it is acknowledged, asks the shard's write guard first (shard_write_guard.hpp: the
// permit, then one lstat of the epoch stamp); a refusal is returned as the call's error, so the
// writer fails and acknowledges nothing. The guard thus sits right before each write system
// call, in one place, without a check in each writer (docs/cluster.md, "Fencing").
//   - Checked: open with O_CREAT or O_TRUNC, write, pwrite, fallocate, fsync, fdatasync, syncfs,
//     ftruncate, rename, link, unlink, mkdir, chmod. Reads, stats, listings and close pass.
//   - seal(why): the shard left this node (released, or fenced): every checked call is refused
//     from then on (errc::locked naming the shard and why), whatever the guard says, so a
//     session that outlived the close's deadline writes nothing more.
//   - Thread-safe (the guard and the seal are atomic reads). The inner fs and the guard outlive
//     this object; this object outlives every actor that was given it.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/shard_write_guard.hpp"
#include "storage/forwarding_fs.hpp"

namespace sessionrt::cluster {

class guarded_fs : public storage::forwarding_fs {
 public:
  guarded_fs(storage::fs& inner, std::shared_ptr<const shard_write_guard> guard);

  void seal(const std::string& why);
  bool sealed() const { return sealed_.load(); }
  const shard_write_guard& guard() const { return *guard_; }
  // Checked calls refused so far (tests, figures).
  std::uint64_t refused() const { return refused_.load(); }

  result<int> open(const std::string& p, int flags, mode_t mode) override;
  result<std::size_t> write(int fd, const char* d, std::size_t n) override;
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override;
  status fallocate(int fd, std::uint64_t o, std::uint64_t n) override;
  status fsync(int fd) override;
  status fdatasync(int fd) override;
  status syncfs(int fd) override;
  status ftruncate(int fd, std::uint64_t n) override;
  status rename(const std::string& a, const std::string& b) override;
  status link(const std::string& a, const std::string& b) override;
  status unlink(const std::string& p) override;
  status mkdir(const std::string& p, mode_t m) override;
  status chmod(const std::string& p, mode_t m) override;

 private:
  status check(const char* op) const;

  std::shared_ptr<const shard_write_guard> guard_;
  std::atomic<bool> sealed_{false};
  mutable std::mutex why_mu_;
  std::string why_;
  mutable std::atomic<std::uint64_t> refused_{0};
};

}  // namespace sessionrt::cluster
