#include "storage/change_feed_fs.hpp"

#include <fcntl.h>

#include <utility>

namespace sessionrt::storage {

void change_feed_fs::watch(const std::string& dir) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& d : dirs_)
    if (d == dir) return;
  dirs_.push_back(dir);
  changed_.emplace_back();
}

std::optional<std::unordered_set<std::string>> change_feed_fs::take(const std::string& dir) {
  std::lock_guard<std::mutex> g(mu_);
  for (std::size_t i = 0; i < dirs_.size(); ++i)
    if (dirs_[i] == dir) return std::exchange(changed_[i], {});
  return std::nullopt;
}

std::optional<change_feed_fs::where> change_feed_fs::locate(const std::string& path) const {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size()) return std::nullopt;
  const std::string_view parent(path.data(), slash);
  for (std::size_t i = 0; i < dirs_.size(); ++i)
    if (dirs_[i] == parent) return where{i, path.substr(slash + 1)};
  return std::nullopt;
}

void change_feed_fs::note(const std::string& path) {
  std::lock_guard<std::mutex> g(mu_);
  if (auto w = locate(path)) changed_[w->dir].insert(std::move(w->name));
}

void change_feed_fs::note_fd(int fd) {
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = writable_.find(fd); it != writable_.end()) changed_[it->second.dir].insert(it->second.name);
}

result<int> change_feed_fs::open(const std::string& path, int flags, mode_t mode) {
  auto fd = forwarding_fs::open(path, flags, mode);
  const bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0;
  if (!writes) return fd;
  std::lock_guard<std::mutex> g(mu_);
  auto w = locate(path);
  if (!w) return fd;
  changed_[w->dir].insert(w->name);  // even a failed O_CREAT may have raced a creation
  if (fd.ok()) writable_[*fd] = std::move(*w);
  return fd;
}

status change_feed_fs::close(int fd) {
  {
    std::lock_guard<std::mutex> g(mu_);
    writable_.erase(fd);
  }
  return forwarding_fs::close(fd);
}

result<std::size_t> change_feed_fs::write(int fd, const char* data, std::size_t n) {
  auto r = forwarding_fs::write(fd, data, n);
  note_fd(fd);
  return r;
}

status change_feed_fs::write_gather(int fd, std::span<const std::string_view> pieces) {
  status st = inner_.write_gather(fd, pieces);
  note_fd(fd);
  return st;
}

result<std::size_t> change_feed_fs::pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) {
  auto r = forwarding_fs::pwrite(fd, data, n, offset);
  note_fd(fd);
  return r;
}

status change_feed_fs::ftruncate(int fd, std::uint64_t length) {
  auto st = forwarding_fs::ftruncate(fd, length);
  note_fd(fd);
  return st;
}

status change_feed_fs::rename(const std::string& from, const std::string& to) {
  auto st = forwarding_fs::rename(from, to);
  note(from);
  note(to);
  return st;
}

status change_feed_fs::link(const std::string& from, const std::string& to) {
  auto st = forwarding_fs::link(from, to);
  note(to);
  return st;
}

status change_feed_fs::unlink(const std::string& path) {
  auto st = forwarding_fs::unlink(path);
  note(path);
  return st;
}

}  // namespace sessionrt::storage
