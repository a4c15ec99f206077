// shard_epoch_file: a shard's epoch in its durable state on the shared storage, the file
// <shard dir>/epoch = {"epoch":N,"node":"<id>"}\n, replaced atomically and fsync'd
// (storage::replace_file_atomic) so a reader on any node sees the old or the new stamp.
// open_shard() applies epoch_fence's rule: it refuses (locked) when the file records a higher
// epoch than the claim, stamps the claim's epoch when the file records a lower one or none, and
// returns the epoch now recorded. Every syscall goes through storage::fs.
// An unreadable stamp is errc::corrupt naming the file: never overwritten, since it may hold
// the only trace of a newer owner.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "cluster/epoch_fence.hpp"
#include "storage/fs.hpp"

namespace sessionrt::cluster {

std::string shard_epoch_path(const std::string& shard_dir);  // <shard dir>/epoch

// nullopt when the file does not exist (the shard was never opened by a cluster node).
result<std::optional<std::int64_t>> read_shard_epoch(storage::fs& fs, const std::string& path);
// Replaces the stamp; refuses (locked) a lower epoch than the recorded one.
status stamp_shard_epoch(storage::fs& fs, const std::string& path, std::int64_t epoch, const std::string& node);
// The fence's open: the epoch recorded afterwards (the claim's), or the fenced error.
result<std::int64_t> open_shard(storage::fs& fs, const std::string& shard_dir, const epoch_fence& fence);

}  // namespace sessionrt::cluster
