#include "storage/faulty_fs.hpp"

#include <cerrno>

namespace sessionrt::storage {

namespace {
status dead(const char* op) { return errno_status(EIO, op, "(crashed)"); }
}  // namespace

int faulty_fs::step(fs_op op) {
  int n = ++counts_[op];
  auto it = rules_.find(op);
  if (it != rules_.end() && it->second.at == n) {
    int err = it->second.err;
    rules_.erase(it);
    return err;
  }
  return 0;
}

result<int> faulty_fs::open(const std::string& path, int flags, mode_t mode) {
  if (crashed_) return dead("open");
  if (int e = step(fs_op::open)) return errno_status(e, "open", path);
  return inner_.open(path, flags, mode);
}

status faulty_fs::close(int fd) { return inner_.close(fd); }  // closing is allowed even when "dead"

result<std::size_t> faulty_fs::write(int fd, const char* data, std::size_t n) {
  if (crashed_) return dead("write");
  int e = step(fs_op::write);
  if (crash_write_ != 0 && count(fs_op::write) == crash_write_) {
    crashed_ = true;
    std::size_t keep = std::min(crash_keep_, n);
    if (keep > 0) (void)write_all(inner_, fd, data, keep);
    return dead("write");
  }
  if (e) return errno_status(e, "write", "");
  std::size_t want = n;
  if (short_writes_ && want > 1) want = want / 2;
  if (has_space_limit_) {
    if (space_left_ == 0) return errno_status(ENOSPC, "write", "");
    want = std::min<std::uint64_t>(want, space_left_);
  }
  auto r = inner_.write(fd, data, want);
  if (r.ok() && has_space_limit_) space_left_ -= *r;
  return r;
}

result<std::size_t> faulty_fs::pread(int fd, char* buf, std::size_t n, std::uint64_t offset) {
  if (crashed_) return dead("read");
  return inner_.pread(fd, buf, n, offset);
}

status faulty_fs::fsync(int fd) {
  if (crashed_) return dead("fsync");
  if (int e = step(fs_op::fsync)) return errno_status(e, "fsync", "");
  return inner_.fsync(fd);
}

status faulty_fs::fdatasync(int fd) {
  if (crashed_) return dead("fdatasync");
  if (int e = step(fs_op::fdatasync)) return errno_status(e, "fdatasync", "");
  return inner_.fdatasync(fd);
}

status faulty_fs::syncfs(int fd) {
  if (crashed_) return dead("syncfs");
  if (int e = step(fs_op::syncfs)) return errno_status(e, "syncfs", "");
  return inner_.syncfs(fd);
}

status faulty_fs::ftruncate(int fd, std::uint64_t length) {
  if (crashed_) return dead("ftruncate");
  if (int e = step(fs_op::ftruncate)) return errno_status(e, "ftruncate", "");
  return inner_.ftruncate(fd, length);
}

result<file_info> faulty_fs::fstat(int fd) {
  if (crashed_) return dead("fstat");
  return inner_.fstat(fd);
}
result<file_info> faulty_fs::stat(const std::string& path) {
  if (crashed_) return dead("stat");
  return inner_.stat(path);
}
result<file_info> faulty_fs::lstat(const std::string& path) {
  if (crashed_) return dead("lstat");
  return inner_.lstat(path);
}

status faulty_fs::rename(const std::string& from, const std::string& to) {
  if (crashed_) return dead("rename");
  if (int e = step(fs_op::rename)) return errno_status(e, "rename", from + " -> " + to);
  return inner_.rename(from, to);
}

status faulty_fs::link(const std::string& from, const std::string& to) {
  if (crashed_) return dead("link");
  if (int e = step(fs_op::link)) return errno_status(e, "link", from + " -> " + to);
  return inner_.link(from, to);
}

status faulty_fs::unlink(const std::string& path) {
  if (crashed_) return dead("unlink");
  if (int e = step(fs_op::unlink)) return errno_status(e, "unlink", path);
  return inner_.unlink(path);
}

status faulty_fs::mkdir(const std::string& path, mode_t mode) {
  if (crashed_) return dead("mkdir");
  if (int e = step(fs_op::mkdir)) return errno_status(e, "mkdir", path);
  return inner_.mkdir(path, mode);
}

status faulty_fs::chmod(const std::string& path, mode_t mode) {
  if (crashed_) return dead("chmod");
  return inner_.chmod(path, mode);
}

result<std::vector<std::string>> faulty_fs::list_dir(const std::string& path) {
  if (crashed_) return dead("opendir");
  return inner_.list_dir(path);
}

result<std::string> faulty_fs::realpath(const std::string& path) {
  if (crashed_) return dead("realpath");
  return inner_.realpath(path);
}

}  // namespace sessionrt::storage
