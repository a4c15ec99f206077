#include "sim/fault_window_fs.hpp"

#include <fcntl.h>

#include <cerrno>

namespace sessionrt::sim {

namespace {
bool targets(fault_target t, const std::string& path) {
  switch (t) {
    case fault_target::any:
      return true;
    case fault_target::store:
      return path.find("sessions.json") != std::string::npos;
    case fault_target::transcript:
      return path.find(".jsonl") != std::string::npos;
  }
  return false;
}
}  // namespace

std::size_t fault_window_fs::add_window(const fault_spec& spec, std::int64_t from_ms) {
  std::lock_guard<std::mutex> g(mu_);
  windows_.push_back({spec, from_ms, from_ms + spec.duration_ms, 0});
  any_.store(true);
  return windows_.size() - 1;
}

std::int64_t fault_window_fs::injected(std::size_t w) const {
  std::lock_guard<std::mutex> g(mu_);
  return w < windows_.size() ? windows_[w].injected : 0;
}

fault_window_fs::window* fault_window_fs::active(const std::string& path, std::initializer_list<fault_kind> kinds) {
  const std::int64_t now = time_.now_ms();
  for (auto& w : windows_) {
    if (now < w.from || now >= w.until || !targets(w.spec.target, path)) continue;
    for (auto k : kinds)
      if (w.spec.kind == k) return &w;
  }
  return nullptr;
}

std::string fault_window_fs::path_of(int fd) const {
  auto it = fds_.find(fd);
  return it == fds_.end() ? std::string() : it->second.path;
}

result<int> fault_window_fs::open(const std::string& path, int flags, mode_t mode) {
  if (any_.load() && (flags & O_CREAT)) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(path, {fault_kind::enospc}); w && !inner_.lstat(path).ok()) {
      ++w->injected;
      return storage::errno_status(ENOSPC, "open", path);
    }
  }
  const bool may_create = (flags & (O_CREAT | O_TRUNC)) != 0;
  const bool existed = !stamp_ || !may_create || inner_.lstat(path).ok();
  auto fd = inner_.open(path, flags, mode);
  if (fd.ok()) {
    std::lock_guard<std::mutex> g(mu_);
    open_fd& entry = fds_[*fd];
    entry.path = path;
    if (stamp_) {
      if (!existed) mtimes_[path] = std::make_shared<std::int64_t>(time_.now_ms());  // a new file
      else if (flags & O_TRUNC) touch(path);
      if (auto it = mtimes_.find(path); it != mtimes_.end()) entry.mtime = it->second;
    }
  }
  return fd;
}

status fault_window_fs::close(int fd) {
  {
    std::lock_guard<std::mutex> g(mu_);
    fds_.erase(fd);
  }
  return inner_.close(fd);
}

// write and pwrite meet the same windows (the commit log writes with pwrite); `inner` does the
// write with the count the window leaves.
template <class Inner>
result<std::size_t> fault_window_fs::faulted_write(int fd, std::size_t n, Inner&& inner) {
  if (any_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(path_of(fd), {fault_kind::enospc, fault_kind::eio, fault_kind::short_write})) {
      ++w->injected;
      if (w->spec.kind == fault_kind::enospc) return storage::errno_status(ENOSPC, "write", "");
      if (w->spec.kind == fault_kind::eio) return storage::errno_status(EIO, "write", "");
      if (n > 1) n /= 2;
    }
  }
  auto r = inner(n);
  if (r.ok()) stamp_fd(fd);
  return r;
}

result<std::size_t> fault_window_fs::write(int fd, const char* data, std::size_t n) {
  return faulted_write(fd, n, [&](std::size_t len) { return inner_.write(fd, data, len); });
}

status fault_window_fs::write_gather(int fd, std::span<const std::string_view> pieces) {
  if (any_.load()) return fs::write_gather(fd, pieces);
  status st = inner_.write_gather(fd, pieces);
  if (st.ok()) stamp_fd(fd);
  return st;
}

result<std::size_t> fault_window_fs::pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) {
  return faulted_write(fd, n, [&](std::size_t len) { return inner_.pwrite(fd, data, len, offset); });
}

status fault_window_fs::fsync(int fd) {
  if (any_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(path_of(fd), {fault_kind::eio})) {
      ++w->injected;
      return storage::errno_status(EIO, "fsync", "");
    }
  }
  const syncing busy(syncs_);
  return inner_.fsync(fd);
}

status fault_window_fs::fdatasync(int fd) {
  if (any_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(path_of(fd), {fault_kind::eio})) {
      ++w->injected;
      return storage::errno_status(EIO, "fdatasync", "");
    }
  }
  const syncing busy(syncs_);
  return inner_.fdatasync(fd);
}

status fault_window_fs::syncfs(int fd) {
  if (any_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(path_of(fd), {fault_kind::eio})) {
      ++w->injected;
      return storage::errno_status(EIO, "syncfs", "");
    }
  }
  const syncing busy(syncs_);
  return inner_.syncfs(fd);
}

status fault_window_fs::rename(const std::string& from, const std::string& to) {
  if (any_.load()) {
    std::lock_guard<std::mutex> g(mu_);
    if (window* w = active(to, {fault_kind::eio})) {
      ++w->injected;
      return storage::errno_status(EIO, "rename", to);
    }
  }
  SRT_RETURN_IF_ERROR(inner_.rename(from, to));
  if (!stamp_) return {};
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = mtimes_.find(from); it != mtimes_.end()) {
    mtime_cell cell = std::move(it->second);  // a rename keeps the file's mtime
    mtimes_.erase(it);
    mtimes_[to] = std::move(cell);
  } else {
    mtimes_.erase(to);
  }
  return {};
}

status fault_window_fs::link(const std::string& from, const std::string& to) {
  SRT_RETURN_IF_ERROR(inner_.link(from, to));
  if (!stamp_) return {};
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = mtimes_.find(from); it != mtimes_.end()) mtimes_[to] = it->second;  // one file, two names
  return {};
}

status fault_window_fs::unlink(const std::string& path) {
  SRT_RETURN_IF_ERROR(inner_.unlink(path));
  if (!stamp_) return {};
  std::lock_guard<std::mutex> g(mu_);
  mtimes_.erase(path);
  return {};
}

status fault_window_fs::ftruncate(int fd, std::uint64_t length) {
  SRT_RETURN_IF_ERROR(inner_.ftruncate(fd, length));
  stamp_fd(fd);
  return {};
}

void fault_window_fs::stamp_fd(int fd) {
  if (!stamp_) return;
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = fds_.find(fd); it != fds_.end()) touch(it->second);
}

void fault_window_fs::touch(const std::string& path) {
  mtime_cell& cell = mtimes_[path];
  if (!cell) cell = std::make_shared<std::int64_t>();
  *cell = time_.now_ms();
}

void fault_window_fs::touch(open_fd& fd) {
  if (!fd.mtime) {
    // A file this fs had not stamped yet: it gets a time of its own, under the name it was
    // opened by unless that name is another file's now.
    fd.mtime = std::make_shared<std::int64_t>();
    mtimes_.try_emplace(fd.path, fd.mtime);
  }
  *fd.mtime = time_.now_ms();
}

result<storage::file_info> fault_window_fs::with_mtime(result<storage::file_info> info, const mtime_cell& mtime) {
  if (info.ok() && mtime) info->mtime_ns = info->ctime_ns = *mtime * 1'000'000;
  return info;
}

result<storage::file_info> fault_window_fs::fstat(int fd) {
  if (!stamp_) return inner_.fstat(fd);
  auto info = inner_.fstat(fd);
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  return with_mtime(std::move(info), it == fds_.end() ? nullptr : it->second.mtime);
}

result<storage::file_info> fault_window_fs::stat(const std::string& path) {
  if (!stamp_) return inner_.stat(path);
  auto info = inner_.stat(path);
  std::lock_guard<std::mutex> g(mu_);
  auto it = mtimes_.find(path);
  return with_mtime(std::move(info), it == mtimes_.end() ? nullptr : it->second);
}

result<storage::file_info> fault_window_fs::lstat(const std::string& path) {
  if (!stamp_) return inner_.lstat(path);
  auto info = inner_.lstat(path);
  std::lock_guard<std::mutex> g(mu_);
  auto it = mtimes_.find(path);
  return with_mtime(std::move(info), it == mtimes_.end() ? nullptr : it->second);
}

}  // namespace sessionrt::sim
