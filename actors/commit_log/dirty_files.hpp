// dirty_files: the transcripts written since a commit log file began, for the checkpoint that
// makes them durable so that the log file can go. Files on the log's own filesystem (the home
// device: the state dir's, where transcripts live) are not kept open: the checkpoint syncs that
// filesystem with one syncfs through the log's directory, so a trimmed or passivated session's
// descriptor closes as soon as its records are answered. Per other filesystem it keeps at most
// storage::kSyncfsFrom open files (that many mean one syncfs of theirs). Files whose filesystem
// is unknown are all kept (each is synced on its own).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "storage/shared_fd.hpp"

namespace sessionrt::actors {

class dirty_files {
 public:
  explicit dirty_files(std::optional<std::uint64_t> home = std::nullopt) : home_(home) {}
  // `device`: the file's st_dev, nullopt when it could not be read.
  void add(const storage::shared_fd_ptr& file, std::optional<std::uint64_t> device);
  void merge(dirty_files&& other);
  // The handles to pass to storage::sync_together.
  std::vector<storage::shared_fd_ptr> files() const;
  // A file on the home device was added: the checkpoint syncs that filesystem.
  bool home_dirty() const { return home_dirty_; }
  bool empty() const { return by_device_.empty() && loose_.empty() && !home_dirty_; }
  std::size_t kept() const;

 private:
  std::map<std::uint64_t, std::vector<storage::shared_fd_ptr>> by_device_;
  std::vector<storage::shared_fd_ptr> loose_;
  std::optional<std::uint64_t> home_;
  bool home_dirty_ = false;
};

}  // namespace sessionrt::actors
