// shard_write_guard: the check a node makes right before each write to a shard it opened
// (shard_state.hpp): may this node still write here? Both must hold:
//   - its write_permit is valid (the lease was renewed less than TTL/2 ago, monotonic clock);
//   - the shard's epoch stamp still records this node's epoch E.
// The stamp is checked by one lstat of <shard dir>/epoch compared with the file the open left
// (device, inode, size, mtime): a new owner's stamp is a new file (replace_file_atomic), so an
// unchanged identity means an unchanged epoch without reading it. A changed one is read, and a
// higher epoch fences the guard for good (every later check refuses without I/O). The permit is
// the guard that cannot lag: a new owner exists only after this node's lease expired, at TTL,
// and the permit closed at TTL/2. The stamp is a second guard that sees a takeover as soon as
// the shared filesystem shows the new stamp (on NFS, after the attribute cache's delay).
//
// Contract:
//   - check() is thread-safe and cheap (an atomic read, then one lstat); call it right before
//     every write that acknowledges something (a transcript append, a store save, a commit log
//     record), never once per batch of writes, so the window between check and write stays
//     a few system calls wide.
//   - Errors are errc::locked naming the shard, the node and the cause (fenced by epoch N,
//     permit expired, stamp gone): the caller must not write and must not acknowledge.
//     io_error when the stamp cannot be stat'ed or read (refuse too: nothing proves the shard
//     is still ours).
//   - The permit and the fs outlive the guard.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "cluster/epoch_fence.hpp"
#include "cluster/write_permit.hpp"
#include "storage/fs.hpp"

namespace sessionrt::cluster {

class shard_write_guard {
 public:
  // `stamp` is the epoch file as the open left it (stamped or found at E).
  shard_write_guard(storage::fs& fs, std::string shard_dir, epoch_fence fence, const write_permit& permit,
                    storage::file_info stamp);

  status check() const;
  // True once a higher epoch was seen (check() refuses for good).
  bool fenced() const { return fenced_by_.load() != 0; }
  const epoch_fence& fence() const { return fence_; }
  const std::string& shard_dir() const { return dir_; }

 private:
  status check_stamp() const;

  storage::fs& fs_;
  std::string dir_;
  std::string path_;
  epoch_fence fence_;
  const write_permit& permit_;
  storage::file_info stamp_;
  mutable std::atomic<std::int64_t> fenced_by_{0};  // the higher epoch seen, 0 while none
};

}  // namespace sessionrt::cluster
