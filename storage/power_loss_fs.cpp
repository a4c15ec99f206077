#include "storage/power_loss_fs.hpp"

#include <fcntl.h>

#include <cerrno>
#include <optional>

#include "storage/durable_file.hpp"

namespace sessionrt::storage {

std::uint64_t power_loss_fs::draw(std::uint64_t bound) {
  // splitmix64: small, seedable, the same on every platform.
  std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return bound == 0 ? 0 : z % bound;
}

void power_loss_fs::name_created(const std::string& path) { new_names_[path_dirname(path)].insert(path); }

void power_loss_fs::name_gone(const std::string& path) {
  auto d = new_names_.find(path_dirname(path));
  if (d != new_names_.end()) d->second.erase(path);
  auto it = by_name_.find(path);
  if (it == by_name_.end()) return;
  auto f = files_.find(it->second);
  if (f != files_.end()) {
    f->second.names.erase(path);
    if (f->second.names.empty()) files_.erase(f);
  }
  by_name_.erase(it);
}

result<int> power_loss_fs::open(const std::string& path, int flags, mode_t mode) {
  if (dead()) return refused("open");
  bool existed = true;
  if (flags & O_CREAT) existed = inner_.lstat(path).ok();
  auto fd = inner_.open(path, flags, mode);
  if (!fd.ok()) return fd;
  auto info = inner_.fstat(*fd);
  if (!info.ok()) return *fd;  // untracked: treated as durable
  std::lock_guard<std::mutex> g(mu_);
  const inode node{info->dev, info->ino};
  fds_[*fd] = {node, path, info->is_dir()};
  if (info->is_dir()) return *fd;
  auto [it, fresh] = files_.try_emplace(node);
  if (fresh) it->second.size = it->second.durable = info->size;
  it->second.size = info->size;
  if (it->second.durable > info->size) it->second.durable = info->size;
  if (it->second.size > it->second.durable) written_.insert(node);
  if (it->second.names.insert(path).second) by_name_[path] = node;
  if (!existed) name_created(path);
  return *fd;
}

status power_loss_fs::close(int fd) {
  {
    std::lock_guard<std::mutex> g(mu_);
    fds_.erase(fd);
  }
  return inner_.close(fd);  // closing is allowed when dead: descriptors must not leak
}

result<std::size_t> power_loss_fs::write(int fd, const char* data, std::size_t n) {
  if (dead()) return refused("write");
  auto r = inner_.write(fd, data, n);
  if (r.ok()) appended(fd, *r);
  return r;
}

status power_loss_fs::write_gather(int fd, std::span<const std::string_view> pieces) {
  if (dead()) return refused("write");
  status st = inner_.write_gather(fd, pieces);
  if (st.ok()) {
    std::uint64_t n = 0;
    for (std::string_view p : pieces) n += p.size();
    appended(fd, n);
  } else if (auto info = inner_.fstat(fd); info.ok()) {
    grew_to(fd, info->size);  // failed part way: what reached the file is unsynced like the rest
  }
  return st;
}

void power_loss_fs::appended(int fd, std::uint64_t n) {
  bytes_written_.fetch_add(n);
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return;
  auto f = files_.find(it->second.node);
  if (f == files_.end()) return;
  f->second.size += n;
  written_.insert(f->first);
}

void power_loss_fs::grew_to(int fd, std::uint64_t end) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return;
  auto f = files_.find(it->second.node);
  if (f == files_.end()) return;
  written_.insert(f->first);
  if (end > f->second.size) f->second.size = end;
}

result<std::size_t> power_loss_fs::pwrite(int fd, const char* data, std::size_t n, std::uint64_t offset) {
  if (dead()) return refused("write");
  auto r = inner_.pwrite(fd, data, n, offset);
  if (!r.ok()) return r;
  bytes_written_.fetch_add(*r);
  grew_to(fd, offset + *r);
  return r;
}

status power_loss_fs::fallocate(int fd, std::uint64_t offset, std::uint64_t length) {
  if (dead()) return refused("fallocate");
  SRT_RETURN_IF_ERROR(inner_.fallocate(fd, offset, length));
  grew_to(fd, offset + length);
  return {};
}

status power_loss_fs::fsync(int fd) {
  if (dead()) return refused("fsync");
  if (forward_syncs_) SRT_RETURN_IF_ERROR(inner_.fsync(fd));
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return {};
  if (it->second.dir) {
    new_names_.erase(it->second.path);
  } else if (auto f = files_.find(it->second.node); f != files_.end()) {
    f->second.durable = f->second.size;
  }
  return {};
}

status power_loss_fs::fdatasync(int fd) {
  if (dead()) return refused("fdatasync");
  if (forward_syncs_) SRT_RETURN_IF_ERROR(inner_.fdatasync(fd));
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end() || it->second.dir) return {};
  if (auto f = files_.find(it->second.node); f != files_.end()) f->second.durable = f->second.size;
  return {};
}

status power_loss_fs::syncfs(int fd) {
  if (dead()) return refused("syncfs");
  if (forward_syncs_) SRT_RETURN_IF_ERROR(inner_.syncfs(fd));
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& node : written_)
    if (auto f = files_.find(node); f != files_.end()) f->second.durable = f->second.size;
  written_.clear();
  new_names_.clear();
  return {};
}

status power_loss_fs::ftruncate(int fd, std::uint64_t length) {
  if (dead()) return refused("ftruncate");
  SRT_RETURN_IF_ERROR(inner_.ftruncate(fd, length));
  std::lock_guard<std::mutex> g(mu_);
  auto it = fds_.find(fd);
  if (it == fds_.end()) return {};
  if (auto f = files_.find(it->second.node); f != files_.end()) {
    f->second.size = length;
    if (f->second.durable > length) f->second.durable = length;
  }
  return {};
}

status power_loss_fs::rename(const std::string& from, const std::string& to) {
  if (dead()) return refused("rename");
  const bool existed = inner_.lstat(to).ok();
  SRT_RETURN_IF_ERROR(inner_.rename(from, to));
  std::lock_guard<std::mutex> g(mu_);
  std::optional<inode> node;
  if (auto it = by_name_.find(from); it != by_name_.end()) node = it->second;
  name_gone(to);  // a replaced file's inode loses that name
  if (node) {
    // The file keeps its lengths under the new name. (name_gone(from) would drop them with its
    // last name, and the next open would then take a synced file's whole length as unsynced.)
    if (auto d = new_names_.find(path_dirname(from)); d != new_names_.end()) d->second.erase(from);
    by_name_.erase(from);
    file_state& f = files_[*node];
    f.names.erase(from);
    f.names.insert(to);
    by_name_[to] = *node;
  } else {
    name_gone(from);
  }
  // Replacing an existing name is taken as durable (the old file is gone from this model);
  // a new name vanishes at a power loss unless its directory is synced first.
  if (!existed) name_created(to);
  return {};
}

status power_loss_fs::link(const std::string& from, const std::string& to) {
  if (dead()) return refused("link");
  SRT_RETURN_IF_ERROR(inner_.link(from, to));
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = by_name_.find(from); it != by_name_.end()) {
    const inode node = it->second;
    files_[node].names.insert(to);
    by_name_[to] = node;
  }
  name_created(to);
  return {};
}

status power_loss_fs::unlink(const std::string& path) {
  if (dead()) return refused("unlink");
  SRT_RETURN_IF_ERROR(inner_.unlink(path));
  std::lock_guard<std::mutex> g(mu_);
  name_gone(path);
  return {};
}

status power_loss_fs::mkdir(const std::string& path, mode_t mode) {
  if (dead()) return refused("mkdir");
  return inner_.mkdir(path, mode);  // directories are kept: fs has no rmdir to undo one
}

std::uint64_t power_loss_fs::unsynced_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  std::uint64_t n = 0;
  for (const auto& [node, f] : files_) n += f.size - f.durable;
  return n;
}

result<power_loss_report> power_loss_fs::power_loss() {
  die();
  std::lock_guard<std::mutex> g(mu_);
  power_loss_report rep;
  // Path order, so that one seed gives one outcome whatever the inode numbers are.
  std::map<std::string, const file_state*> cut;
  for (const auto& [node, f] : files_)
    if (f.size > f.durable && !f.names.empty()) cut.emplace(*f.names.begin(), &f);
  for (const auto& [path, f] : cut) {
    const std::uint64_t unsynced = f->size - f->durable;
    const std::uint64_t keep = f->durable + draw(unsynced);
    auto fd = inner_.open(path, O_WRONLY | O_NOFOLLOW, 0600);
    if (!fd.ok()) return fd.error().with_context("power loss: cutting " + path);
    status st = inner_.ftruncate(*fd, keep);
    (void)inner_.close(*fd);
    if (!st.ok()) return st.with_context("power loss: cutting " + path);
    ++rep.files_torn;
    rep.bytes_dropped += f->size - keep;
    rep.torn.push_back(path);
  }
  std::set<std::string> fresh;
  for (const auto& [dir, names] : new_names_) fresh.insert(names.begin(), names.end());
  for (const auto& path : fresh) {
    if (draw(2) == 0) continue;
    auto info = inner_.lstat(path);
    if (!info.ok() || info->is_dir()) continue;
    if (status st = inner_.unlink(path); !st.ok() && st.code() != errc::not_found)
      return st.with_context("power loss: dropping the unsynced entry " + path);
    ++rep.entries_vanished;
    rep.vanished.push_back(path);
  }
  fds_.clear();
  files_.clear();
  written_.clear();
  by_name_.clear();
  new_names_.clear();
  revive();
  return rep;
}

}  // namespace sessionrt::storage
