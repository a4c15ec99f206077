#include "actors/commit_log/dirty_files.hpp"

#include <algorithm>

#include "storage/group_sync.hpp"

namespace sessionrt::actors {
namespace {
bool holds(const std::vector<storage::shared_fd_ptr>& v, const storage::shared_fd_ptr& f) {
  return std::any_of(v.begin(), v.end(), [&](const auto& x) { return x->id() == f->id(); });
}
}  // namespace

void dirty_files::add(const storage::shared_fd_ptr& file, std::optional<std::uint64_t> device) {
  if (!file) return;
  if (device && home_ && *device == *home_) {
    home_dirty_ = true;
    return;
  }
  if (!device) {
    if (!holds(loose_, file)) loose_.push_back(file);
    return;
  }
  auto& group = by_device_[*device];
  if (group.size() < storage::kSyncfsFrom && !holds(group, file)) group.push_back(file);
}

void dirty_files::merge(dirty_files&& other) {
  home_dirty_ = home_dirty_ || other.home_dirty_;
  if (!home_) home_ = other.home_;
  for (auto& f : other.loose_)
    if (!holds(loose_, f)) loose_.push_back(std::move(f));
  for (auto& [dev, group] : other.by_device_)
    for (auto& f : group) add(f, dev);
  other = dirty_files(other.home_);
}

std::vector<storage::shared_fd_ptr> dirty_files::files() const {
  std::vector<storage::shared_fd_ptr> out = loose_;
  for (const auto& [dev, group] : by_device_) out.insert(out.end(), group.begin(), group.end());
  return out;
}

std::size_t dirty_files::kept() const {
  std::size_t n = loose_.size();
  for (const auto& [dev, group] : by_device_) n += group.size();
  return n;
}

}  // namespace sessionrt::actors
