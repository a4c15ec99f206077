#include "actors/maintenance/dir_listing.hpp"

#include "actors/maintenance/plan_applier.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::actors {

status dir_listing::rescan(storage::fs& files, const std::string& dir, std::int64_t now_ms) {
  valid_ = false;
  by_name_.clear();
  auto scanned = scan_sessions_dir(files, dir);
  if (!scanned.ok()) return scanned.error();
  for (auto& f : *scanned) {
    std::string name = f.name;
    by_name_.emplace(std::move(name), std::move(f));
  }
  valid_ = true;
  scanned_at_ = now_ms;
  return {};
}

status dir_listing::refresh(storage::fs& files, const std::string& dir, const std::unordered_set<std::string>& changed) {
  for (const auto& name : changed) {
    auto info = files.lstat(storage::path_join(dir, name));
    if (!info.ok() && info.error().code() != errc::not_found) {
      valid_ = false;
      by_name_.clear();
      return info.error().with_context("reading the sessions dir");
    }
    if (!info.ok() || !info->is_regular()) {
      by_name_.erase(name);
      continue;
    }
    by_name_[name] = dir_file{name, info->size, static_cast<std::int64_t>(info->mtime_ns / 1000000)};
  }
  return {};
}

std::vector<dir_file> dir_listing::files() const {
  std::vector<dir_file> out;
  out.reserve(by_name_.size());
  for (const auto& [name, f] : by_name_) out.push_back(f);
  return out;
}

}  // namespace sessionrt::actors
