// forwarding_fs: an fs that passes every call to another. Subclass it and override only the
// calls you want to observe or change (tests that race a writer, count reads, etc.).
#pragma once
#include "storage/fs.hpp"

namespace sessionrt::storage {

class forwarding_fs : public fs {
 public:
  explicit forwarding_fs(fs& inner) : inner_(inner) {}
  result<int> open(const std::string& p, int flags, mode_t mode) override { return inner_.open(p, flags, mode); }
  status close(int fd) override { return inner_.close(fd); }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override { return inner_.write(fd, d, n); }
  result<std::size_t> pread(int fd, char* b, std::size_t n, std::uint64_t o) override { return inner_.pread(fd, b, n, o); }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {
    return inner_.pwrite(fd, d, n, o);
  }
  status fallocate(int fd, std::uint64_t o, std::uint64_t n) override { return inner_.fallocate(fd, o, n); }
  status fsync(int fd) override { return inner_.fsync(fd); }
  status fdatasync(int fd) override { return inner_.fdatasync(fd); }
  status syncfs(int fd) override { return inner_.syncfs(fd); }
  status ftruncate(int fd, std::uint64_t n) override { return inner_.ftruncate(fd, n); }
  result<file_info> fstat(int fd) override { return inner_.fstat(fd); }
  result<file_info> stat(const std::string& p) override { return inner_.stat(p); }
  result<file_info> lstat(const std::string& p) override { return inner_.lstat(p); }
  status rename(const std::string& a, const std::string& b) override { return inner_.rename(a, b); }
  status link(const std::string& a, const std::string& b) override { return inner_.link(a, b); }
  status unlink(const std::string& p) override { return inner_.unlink(p); }
  status mkdir(const std::string& p, mode_t m) override { return inner_.mkdir(p, m); }
  status chmod(const std::string& p, mode_t m) override { return inner_.chmod(p, m); }
  result<std::vector<std::string>> list_dir(const std::string& p) override { return inner_.list_dir(p); }
  result<std::string> realpath(const std::string& p) override { return inner_.realpath(p); }
  // write_gather is not forwarded: fs's default joins the pieces and calls write(), which a
  // subclass may have overridden. A final layer forwards it with its write()'s bookkeeping.
  void size_hint(int fd, std::uint64_t bytes) override { inner_.size_hint(fd, bytes); }

 protected:
  fs& inner_;
};

}  // namespace sessionrt::storage
