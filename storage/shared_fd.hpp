// shared_fd: a file descriptor closed when its last holder lets go, with an id unique in the
// process (fd numbers are reused as soon as they are closed; ids never are). A transcript's
// reader owns one and shares it with the group-commit syncer: a sync request in flight keeps
// its file open, so the syncer never syncs a closed or reused descriptor, and its answer
// names the file by id. device() reads the file's st_dev once and remembers it (a descriptor's
// file never moves to another filesystem), so a group commit need not fstat every file of every
// round; it is safe to call from several threads.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "storage/fs.hpp"

namespace sessionrt::storage {

class shared_fd {
 public:
  // Takes ownership of `fd` (closed through `f` by the destructor; `f` must outlive it).
  shared_fd(fs& f, int fd);
  ~shared_fd();
  shared_fd(const shared_fd&) = delete;
  shared_fd& operator=(const shared_fd&) = delete;

  int fd() const { return fd_; }
  std::uint64_t id() const { return id_; }
  // st_dev of the file, through `f` (fstat) the first time; an fstat error is not remembered.
  result<std::uint64_t> device(fs& f) const;

 private:
  fs& fs_;
  int fd_;
  std::uint64_t id_;
  mutable std::atomic<std::uint64_t> device_{0};
  mutable std::atomic<bool> device_known_{false};
};

using shared_fd_ptr = std::shared_ptr<const shared_fd>;

}  // namespace sessionrt::storage
