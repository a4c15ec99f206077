#include "storage/faulty_fs.hpp"

#include <cerrno>

namespace sessionrt::storage {

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
  if (dead()) return refused("open");
  if (int e = step(fs_op::open)) return errno_status(e, "open", path);
  return inner_.open(path, flags, mode);
}

// write() and pwrite() alike: a crash keeps `crash_keep_` bytes, short writes and the space
// limit cut what is asked; `put(data, n, done)` writes n bytes once, `done` bytes after the start.
template <class Put>
result<std::size_t> faulty_fs::faulted_write(const char* data, std::size_t n, Put put) {
  if (dead()) return refused("write");
  int e = step(fs_op::write);
  if (crash_write_ != 0 && count(fs_op::write) == crash_write_) {
    die();
    std::size_t keep = std::min(crash_keep_, n);
    for (std::size_t done = 0; done < keep;) {
      auto w = put(data + done, keep - done, done);
      if (!w.ok() || *w == 0) break;
      done += *w;
    }
    return refused("write");
  }
  if (e) return errno_status(e, "write", "");
  std::size_t want = n;
  if (short_writes_ && want > 1) want = want / 2;
  if (has_space_limit_) {
    if (space_left_ == 0) return errno_status(ENOSPC, "write", "");
    want = std::min<std::uint64_t>(want, space_left_);
  }
  auto r = put(data, want, 0);
  if (r.ok() && has_space_limit_) space_left_ -= *r;
  return r;
}

result<std::size_t> faulty_fs::write(int fd, const char* data, std::size_t n) {
  return faulted_write(data, n, [&](const char* d, std::size_t k, std::size_t) { return inner_.write(fd, d, k); });
}

result<std::size_t> faulty_fs::pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) {
  return faulted_write(data, n,
                       [&](const char* d, std::size_t k, std::size_t done) { return inner_.pwrite(fd, d, k, offset + done); });
}

status faulty_fs::fsync(int fd) {
  if (dead()) return refused("fsync");
  if (int e = step(fs_op::fsync)) return errno_status(e, "fsync", "");
  return inner_.fsync(fd);
}

status faulty_fs::fdatasync(int fd) {
  if (dead()) return refused("fdatasync");
  if (int e = step(fs_op::fdatasync)) return errno_status(e, "fdatasync", "");
  return inner_.fdatasync(fd);
}

status faulty_fs::syncfs(int fd) {
  if (dead()) return refused("syncfs");
  if (int e = step(fs_op::syncfs)) return errno_status(e, "syncfs", "");
  return inner_.syncfs(fd);
}

status faulty_fs::ftruncate(int fd, std::uint64_t length) {
  if (dead()) return refused("ftruncate");
  if (int e = step(fs_op::ftruncate)) return errno_status(e, "ftruncate", "");
  return inner_.ftruncate(fd, length);
}

status faulty_fs::rename(const std::string& from, const std::string& to) {
  if (dead()) return refused("rename");
  if (int e = step(fs_op::rename)) return errno_status(e, "rename", from + " -> " + to);
  return inner_.rename(from, to);
}

status faulty_fs::link(const std::string& from, const std::string& to) {
  if (dead()) return refused("link");
  if (int e = step(fs_op::link)) return errno_status(e, "link", from + " -> " + to);
  return inner_.link(from, to);
}

status faulty_fs::unlink(const std::string& path) {
  if (dead()) return refused("unlink");
  if (int e = step(fs_op::unlink)) return errno_status(e, "unlink", path);
  return inner_.unlink(path);
}

status faulty_fs::mkdir(const std::string& path, mode_t mode) {
  if (dead()) return refused("mkdir");
  if (int e = step(fs_op::mkdir)) return errno_status(e, "mkdir", path);
  return inner_.mkdir(path, mode);
}

}  // namespace sessionrt::storage
