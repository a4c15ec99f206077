// dir_listing: the maintenance pass's picture of one sessions dir, kept from pass to pass. A
// full scan (scan_sessions_dir: list + lstat every file) replaces it; refresh() stats only the
// names a change feed (storage/change_feed_fs.hpp) reported since, so a pass over a dir of N
// files costs its changes, not N syscalls. The caller decides when a full scan is due (the feed
// misses changes made around it). files() is in name order, as scan_sessions_dir's.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/maintenance/dir_index.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

class dir_listing {
 public:
  // Replaces the picture with a full scan; `now_ms` is remembered as scanned_at().
  status rescan(storage::fs& files, const std::string& dir, std::int64_t now_ms);
  // Stats again each changed name: a regular file is (re)entered, anything else (gone, a
  // directory, a symlink) is dropped. Errors as scan_sessions_dir's; on an error the picture
  // is dropped (valid() is false), so the next pass scans in full.
  status refresh(storage::fs& files, const std::string& dir, const std::unordered_set<std::string>& changed);

  bool valid() const { return valid_; }
  std::int64_t scanned_at() const { return scanned_at_; }
  const dir_index& index() const { return index_; }
  std::vector<dir_file> files() const { return index_.files(); }

 private:
  dir_index index_;
  bool valid_ = false;
  std::int64_t scanned_at_ = 0;
};

}  // namespace sessionrt::actors
