// memory_fs: the fs interface over a file tree held in memory, for simulations: no syscalls and
// no disk, so a simulated month costs its CPU and not the kernel's (power_loss_fs on top already
// decides what a crash keeps, so nothing here needs to be durable).
// - POSIX semantics storage/ relies on: open with O_CREAT / O_EXCL / O_TRUNC / O_APPEND /
//   O_DIRECTORY, short paths resolved from "/" ("." and ".." folded, no symlinks, so O_NOFOLLOW
//   never fails); rename replaces its target atomically; link is an exclusive create; an open
//   descriptor keeps an unlinked or renamed-over file. Errors are the errno a Linux call would
//   give, through errno_status(), so messages read as posix_fs's do.
// - stat: st_dev is one constant, st_ino counts up from 1, permissions are the mode asked for
//   (no umask), mtime / ctime are `time`'s at the last change, so file ages follow virtual time.
// - Descriptors are small integers of this fs only (not the process's); they never run out.
// - Memory: a write goes into the file's own buffer (appends grow it geometrically). A large
//   file's buffer (>= 1 MiB) is kept when the file is gone (its last name and descriptor) and
//   given to the next large file that fits it, so rewriting a big file whole (sessions.json,
//   temp file + rename, each save) reuses pages already mapped instead of faulting fresh ones in
//   (jemalloc maps blocks of 8 MiB or more afresh and unmaps them when freed). At most 4 such
//   buffers, each at most 64 MiB, are kept; a fresh large buffer gets 1/8 headroom so that the
//   next, slightly larger rewrite still fits it.
// Thread-safe (one mutex). The caller owns `time`, which must outlive this fs.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/clock.hpp"
#include "storage/fs.hpp"

namespace sessionrt::storage {

class memory_fs final : public fs {
 public:
  explicit memory_fs(const clock& time);
  ~memory_fs() override;

  // Bytes held in regular files now (each file once, however many names it has).
  std::uint64_t bytes_held() const;
  // The sizes of the regular files directly in `dir` summed (0 when it is not a directory):
  // what list_dir + lstat of each name would add up, in one lookup.
  std::uint64_t bytes_in_dir(const std::string& dir) const;
  // Large buffers allocated afresh / taken from a gone file's, since construction (for tests).
  struct buffer_counts {
    std::uint64_t fresh = 0, reused = 0;
  };
  buffer_counts large_buffers() const;

  result<int> open(const std::string& path, int flags, mode_t mode = 0600) override;
  status close(int fd) override;
  result<std::size_t> write(int fd, const char* data, std::size_t n) override;
  result<std::size_t> pread(int fd, char* buf, std::size_t n, std::uint64_t offset) override;
  result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) override;
  status fallocate(int fd, std::uint64_t offset, std::uint64_t length) override;
  status fsync(int fd) override;
  status fdatasync(int fd) override;
  status syncfs(int fd) override;
  status ftruncate(int fd, std::uint64_t length) override;
  result<file_info> fstat(int fd) override;
  result<file_info> stat(const std::string& path) override;
  result<file_info> lstat(const std::string& path) override;
  status rename(const std::string& from, const std::string& to) override;
  status link(const std::string& from, const std::string& to) override;
  status unlink(const std::string& path) override;
  status mkdir(const std::string& path, mode_t mode) override;
  status chmod(const std::string& path, mode_t mode) override;
  result<std::vector<std::string>> list_dir(const std::string& path) override;
  result<std::string> realpath(const std::string& path) override;
  status write_gather(int fd, std::span<const std::string_view> pieces) override;  // one lock, one grow
  void size_hint(int fd, std::uint64_t bytes) override;  // a large file takes its buffer at once

 private:
  struct node;
  using node_ptr = std::shared_ptr<node>;
  struct open_file {
    node_ptr file;
    int flags = 0;
    std::uint64_t offset = 0;
  };
  struct lookup {
    node_ptr parent;   // the directory that holds (or would hold) the last component
    std::string name;  // the last component ("" for "/")
    node_ptr found;    // the entry, or null
  };
  // Resolves `path`; an error (naming `shown`) when a component before the last is missing or
  // not a directory.
  result<lookup> find(const std::string& path, const char* op, const std::string& shown) const;  // under mu_
  result<lookup> existing(const std::string& path, const char* op) const;  // find(), ENOENT if absent; under mu_
  node_ptr make_node(bool dir, mode_t mode);                           // under mu_
  void touch(node& n);                                                 // mtime + ctime; under mu_
  // Writes `pieces` at `offset`; returns the offset past them. Under mu_.
  std::uint64_t write_at(node& file, std::uint64_t offset, std::span<const std::string_view> pieces);
  void make_room(std::string& bytes, std::uint64_t size);  // capacity for `size` bytes; under mu_
  void recycle(std::string&& bytes);                       // a gone file's buffer; under mu_
  std::int64_t now_ns() const;                                         // the clock's time, in ns
  status known_fd(int fd, const char* op);                            // EBADF unless open
  result<open_file*> descriptor(int fd, const char* op);               // under mu_
  result<open_file*> writable_descriptor(int fd);                      // EBADF unless open for writing; under mu_
  file_info info_of(const node& n) const;

  const clock& time_;
  mutable std::mutex mu_;
  // Before root_ and fds_: the nodes they free at destruction hand their buffers back here.
  std::vector<std::string> spare_;  // empty buffers of gone large files, by capacity ascending
  buffer_counts large_buffers_;
  node_ptr root_;
  std::unordered_map<int, open_file> fds_;
  int next_fd_ = 3;
  std::uint64_t next_ino_ = 1;
};

}  // namespace sessionrt::storage
