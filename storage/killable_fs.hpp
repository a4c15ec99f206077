// killable_fs: a forwarding_fs that stands for a process which can die (a kill -9, a power cut),
// the common part of the crash doubles (faulty_fs, power_loss_fs). Once die() is called, every
// call but close fails with EIO naming the cause given at construction ("(crashed)", "(power
// lost)"): a dead process does nothing more to its files, but the test or simulation that
// drives it must still close its descriptors. revive() makes calls work again.
// A subclass overrides only the calls it models, and each override must refuse first while
// dead (`if (dead()) return refused("op");`), or a dead process could still write. The op names
// are posix_fs's ("read" for pread, "opendir" for list_dir). dead() may be asked from any thread.
#pragma once
#include <atomic>
#include <cerrno>

#include "storage/forwarding_fs.hpp"

namespace sessionrt::storage {

class killable_fs : public forwarding_fs {
 public:
  bool dead() const { return dead_.load(); }

  result<int> open(const std::string& p, int flags, mode_t mode) override {
    if (dead()) return refused("open");
    return inner_.open(p, flags, mode);
  }
  result<std::size_t> write(int fd, const char* d, std::size_t n) override {
    if (dead()) return refused("write");
    return inner_.write(fd, d, n);
  }
  result<std::size_t> pread(int fd, char* b, std::size_t n, std::uint64_t o) override {
    if (dead()) return refused("read");
    return inner_.pread(fd, b, n, o);
  }
  result<std::size_t> pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) override {
    if (dead()) return refused("write");
    return inner_.pwrite(fd, d, n, o);
  }
  status fallocate(int fd, std::uint64_t o, std::uint64_t n) override {
    if (dead()) return refused("fallocate");
    return inner_.fallocate(fd, o, n);
  }
  status fsync(int fd) override { return dead() ? refused("fsync") : inner_.fsync(fd); }
  status fdatasync(int fd) override { return dead() ? refused("fdatasync") : inner_.fdatasync(fd); }
  status syncfs(int fd) override { return dead() ? refused("syncfs") : inner_.syncfs(fd); }
  status ftruncate(int fd, std::uint64_t n) override { return dead() ? refused("ftruncate") : inner_.ftruncate(fd, n); }
  result<file_info> fstat(int fd) override {
    if (dead()) return refused("fstat");
    return inner_.fstat(fd);
  }
  result<file_info> stat(const std::string& p) override {
    if (dead()) return refused("stat");
    return inner_.stat(p);
  }
  result<file_info> lstat(const std::string& p) override {
    if (dead()) return refused("lstat");
    return inner_.lstat(p);
  }
  status rename(const std::string& a, const std::string& b) override {
    return dead() ? refused("rename") : inner_.rename(a, b);
  }
  status link(const std::string& a, const std::string& b) override { return dead() ? refused("link") : inner_.link(a, b); }
  status unlink(const std::string& p) override { return dead() ? refused("unlink") : inner_.unlink(p); }
  status mkdir(const std::string& p, mode_t m) override { return dead() ? refused("mkdir") : inner_.mkdir(p, m); }
  status chmod(const std::string& p, mode_t m) override { return dead() ? refused("chmod") : inner_.chmod(p, m); }
  result<std::vector<std::string>> list_dir(const std::string& p) override {
    if (dead()) return refused("opendir");
    return inner_.list_dir(p);
  }
  result<std::string> realpath(const std::string& p) override {
    if (dead()) return refused("realpath");
    return inner_.realpath(p);
  }

 protected:
  // `cause` is a literal: it outlives the fs.
  killable_fs(fs& inner, const char* cause) : forwarding_fs(inner), cause_(cause) {}
  void die() { dead_.store(true); }
  void revive() { dead_.store(false); }
  status refused(const char* op) const { return errno_status(EIO, op, cause_); }

 private:
  const char* cause_;
  std::atomic<bool> dead_{false};
};

}  // namespace sessionrt::storage
