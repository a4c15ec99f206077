#include "cluster/guarded_fs.hpp"

#include <fcntl.h>
#include <fmt/format.h>

namespace sessionrt::cluster {

guarded_fs::guarded_fs(storage::fs& inner, std::shared_ptr<const shard_write_guard> guard)
    : storage::forwarding_fs(inner), guard_(std::move(guard)) {}

void guarded_fs::seal(const std::string& why) {
  {
    std::lock_guard g(why_mu_);
    if (why_.empty()) why_ = why;
  }
  sealed_.store(true);
}

status guarded_fs::check(const char* op) const {
  status st;
  if (sealed_.load()) {
    std::lock_guard g(why_mu_);
    st = status(errc::locked, fmt::format("shard {} is no longer served by node {} ({}): {} refused",
                                          to_string(guard_->fence().shard()), guard_->fence().node(), why_, op));
  } else {
    st = guard_->check();
  }
  if (!st.ok()) ++refused_;
  return st;
}

result<int> guarded_fs::open(const std::string& p, int flags, mode_t mode) {
  if (flags & (O_CREAT | O_TRUNC)) SRT_RETURN_IF_ERROR(check("open"));
  return inner_.open(p, flags, mode);
}

result<std::size_t> guarded_fs::write(int fd, const char* d, std::size_t n) {
  SRT_RETURN_IF_ERROR(check("write"));
  return inner_.write(fd, d, n);
}

result<std::size_t> guarded_fs::pwrite(int fd, const char* d, std::size_t n, std::uint64_t o) {
  SRT_RETURN_IF_ERROR(check("pwrite"));
  return inner_.pwrite(fd, d, n, o);
}

status guarded_fs::fallocate(int fd, std::uint64_t o, std::uint64_t n) {
  SRT_RETURN_IF_ERROR(check("fallocate"));
  return inner_.fallocate(fd, o, n);
}

status guarded_fs::fsync(int fd) {
  SRT_RETURN_IF_ERROR(check("fsync"));
  return inner_.fsync(fd);
}

status guarded_fs::fdatasync(int fd) {
  SRT_RETURN_IF_ERROR(check("fdatasync"));
  return inner_.fdatasync(fd);
}

status guarded_fs::syncfs(int fd) {
  SRT_RETURN_IF_ERROR(check("syncfs"));
  return inner_.syncfs(fd);
}

status guarded_fs::ftruncate(int fd, std::uint64_t n) {
  SRT_RETURN_IF_ERROR(check("ftruncate"));
  return inner_.ftruncate(fd, n);
}

status guarded_fs::rename(const std::string& a, const std::string& b) {
  SRT_RETURN_IF_ERROR(check("rename"));
  return inner_.rename(a, b);
}

status guarded_fs::link(const std::string& a, const std::string& b) {
  SRT_RETURN_IF_ERROR(check("link"));
  return inner_.link(a, b);
}

status guarded_fs::unlink(const std::string& p) {
  SRT_RETURN_IF_ERROR(check("unlink"));
  return inner_.unlink(p);
}

status guarded_fs::mkdir(const std::string& p, mode_t m) {
  SRT_RETURN_IF_ERROR(check("mkdir"));
  return inner_.mkdir(p, m);
}

status guarded_fs::chmod(const std::string& p, mode_t m) {
  SRT_RETURN_IF_ERROR(check("chmod"));
  return inner_.chmod(p, m);
}

}  // namespace sessionrt::cluster
