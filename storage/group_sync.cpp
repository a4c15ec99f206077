#include "storage/group_sync.hpp"

#include <fcntl.h>

#include "storage/durable_file.hpp"

namespace sessionrt::storage {

group_sync_result sync_together(fs& f, const std::vector<shared_fd_ptr>& files, const std::vector<std::string>& dirs) {
  group_sync_result out;
  auto note = [&](const shared_fd& file, const status& s) { out.files[file.id()] = s.ok() ? std::string() : s.message(); };
  std::unordered_map<std::uint64_t, std::vector<const shared_fd*>> by_device;
  for (const auto& file : files) {
    if (!out.files.emplace(file->id(), std::string()).second) continue;
    auto dev = file->device(f);
    if (dev.ok())
      by_device[*dev].push_back(file.get());
    else
      note(*file, f.fdatasync(file->fd()));  // its filesystem unknown: on its own
  }
  for (const auto& [dev, group] : by_device) {
    if (group.size() < kSyncfsFrom) {
      for (const auto* file : group) note(*file, f.fdatasync(file->fd()));
      continue;
    }
    const status s = f.syncfs(group.front()->fd());
    for (const auto* file : group) note(*file, s);
  }
  for (const auto& dir : dirs)
    if (!dir.empty() && !out.dirs.count(dir)) {
      const status s = fsync_dir(f, dir);
      out.dirs[dir] = s.ok() ? std::string() : s.message();
    }
  return out;
}

status sync_file(fs& f, const std::string& path) {
  auto fd = f.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (!fd.ok()) return fd.error();
  status st = f.fdatasync(*fd).with_context("syncing " + path);
  (void)f.close(*fd);
  return st;
}

}  // namespace sessionrt::storage
