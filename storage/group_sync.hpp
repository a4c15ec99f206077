// group_sync: makes several files durable together (storage.durability=batch, SPEC §1.2: the
// commit log's new transcripts of a round, its checkpoints, and the files a replay touched).
// Per filesystem: fdatasync per file for a few files, one syncfs (one journal commit for all)
// from kSyncfsFrom files on — syncfs covers only its own filesystem, so files are grouped by
// st_dev. Then each directory is fsync'd once (new files' names). Every outcome is "" when
// durable, else the error's message.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/fs.hpp"
#include "storage/shared_fd.hpp"

namespace sessionrt::storage {

inline constexpr std::size_t kSyncfsFrom = 4;

struct group_sync_result {
  std::unordered_map<std::uint64_t, std::string> files;  // shared_fd id -> "" or the error
  std::unordered_map<std::string, std::string> dirs;     // directory -> "" or the error
};

// `files` may repeat a file; `dirs` may repeat a directory or hold "" (none).
group_sync_result sync_together(fs& f, const std::vector<shared_fd_ptr>& files, const std::vector<std::string>& dirs);

// fdatasync of the file at `path` (opened read-only, not following a symlink). A transcript is
// made durable so before it is renamed: a commit log replay finds its records' file by name.
status sync_file(fs& f, const std::string& path);

}  // namespace sessionrt::storage
