#include "actors/maintenance/dir_listing.hpp"

#include "actors/maintenance/plan_applier.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::actors {

status dir_listing::rescan(storage::fs& files, const std::string& dir, std::int64_t now_ms) {
  valid_ = false;
  index_.clear();
  auto scanned = scan_sessions_dir(files, dir);
  if (!scanned.ok()) return scanned.error();
  index_.assign(std::move(*scanned));
  valid_ = true;
  scanned_at_ = now_ms;
  return {};
}

status dir_listing::refresh(storage::fs& files, const std::string& dir, const std::unordered_set<std::string>& changed) {
  std::vector<dir_file> puts;
  std::vector<std::string> gone;
  for (const auto& name : changed) {
    auto info = files.lstat(storage::path_join(dir, name));
    if (!info.ok() && info.error().code() != errc::not_found) {
      valid_ = false;
      index_.clear();
      return info.error().with_context("reading the sessions dir");
    }
    if (!info.ok() || !info->is_regular()) {
      gone.push_back(name);
      continue;
    }
    puts.push_back(dir_file{name, info->size, static_cast<std::int64_t>(info->mtime_ns / 1000000)});
  }
  index_.update(std::move(puts), gone);
  return {};
}

}  // namespace sessionrt::actors
