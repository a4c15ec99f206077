// fs: every syscall storage/ makes goes through this interface, so tests can inject ENOSPC,
// EIO, short writes and crash points (faulty_fs.hpp). One process-wide POSIX implementation
// is returned by posix_fs(). Errors carry the errno-derived code and name the path when the
// call has one; fd-based calls name the operation and callers add the path as context.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::storage {

struct file_info {
  std::uint64_t size = 0;
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  mode_t mode = 0;
  bool is_regular() const { return S_ISREG(mode); }
  bool is_dir() const { return S_ISDIR(mode); }
};

class fs {
 public:
  virtual ~fs() = default;
  virtual result<int> open(const std::string& path, int flags, mode_t mode = 0600) = 0;
  virtual status close(int fd) = 0;
  // May write fewer bytes than asked (a short write); write_all() loops.
  virtual result<std::size_t> write(int fd, const char* data, std::size_t n) = 0;
  virtual result<std::size_t> pread(int fd, char* buf, std::size_t n, std::uint64_t offset) = 0;
  // Writes at `offset`, the file position unmoved (may be short, as write(); pwrite_all() loops).
  virtual result<std::size_t> pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) = 0;
  // Allocates [offset, offset + length) on disk (fallocate mode 0): the size grows to cover it
  // and the new bytes read as zeros. The commit log preallocates its files with it.
  virtual status fallocate(int fd, std::uint64_t offset, std::uint64_t length) = 0;
  virtual status fsync(int fd) = 0;
  virtual status fdatasync(int fd) = 0;
  // Flushes the whole filesystem holding fd (one journal commit for every dirty file on it).
  virtual status syncfs(int fd) = 0;
  virtual status ftruncate(int fd, std::uint64_t length) = 0;
  virtual result<file_info> fstat(int fd) = 0;
  virtual result<file_info> stat(const std::string& path) = 0;   // follows symlinks
  virtual result<file_info> lstat(const std::string& path) = 0;  // does not
  virtual status rename(const std::string& from, const std::string& to) = 0;
  // Hard link; fails with already_exists if `to` exists (exclusive create of a whole file).
  virtual status link(const std::string& from, const std::string& to) = 0;
  virtual status unlink(const std::string& path) = 0;
  virtual status mkdir(const std::string& path, mode_t mode) = 0;
  virtual status chmod(const std::string& path, mode_t mode) = 0;
  virtual result<std::vector<std::string>> list_dir(const std::string& path) = 0;  // names, no . / ..
  virtual result<std::string> realpath(const std::string& path) = 0;

  // Writes `pieces` in order at the file position, all of them or an error (write_all's
  // contract), so a caller holding many small texts (sessions.json's rows) writes them without
  // first copying them into one buffer. This default joins them and calls write(), so a layer
  // that overrides only write() (a fault injector, a counter) still sees every byte; only a
  // final fs overrides it, with its own write()'s bookkeeping.
  virtual status write_gather(int fd, std::span<const std::string_view> pieces);
  // Says that about `bytes` will be written to fd from its start (a whole file written anew),
  // so that a file held in memory takes a buffer of that size at once instead of growing to it
  // by copies. Advisory: nothing visible changes, and the default does nothing.
  virtual void size_hint(int fd, std::uint64_t bytes) {
    (void)fd;
    (void)bytes;
  }
};

// The real filesystem.
fs& posix_fs();

// errno -> status: ENOSPC/EDQUOT -> no_space, ENOENT -> not_found, EEXIST -> already_exists,
// ELOOP (O_NOFOLLOW) -> unsafe_path, others -> io_error. Message: "<op> <path>: <strerror>".
status errno_status(int err, const std::string& op, const std::string& path);

// Loops over short writes; ENOSPC and friends come back as errors.
status write_all(fs& f, int fd, const char* data, std::size_t n);
status pwrite_all(fs& f, int fd, const char* data, std::size_t n, std::uint64_t offset);
// Reads [offset, offset+n) fully (fewer bytes only at end of file).
result<std::string> pread_all(fs& f, int fd, std::size_t n, std::uint64_t offset);

}  // namespace sessionrt::storage
