// state_copy: the rules `store merge` (shard_merge.hpp) and `store split` (shard_split.hpp)
// share when they copy sessions from one layout into the other. Both refuse a source whose
// commit log still holds records (its sessions.json may lack rows a replay would add), and both
// copy a sessions dir's files but the store itself, write locks and temp files.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::cluster::state_copy {

// The largest sessions.json either reads (the store loader's bound).
inline constexpr std::size_t max_store_bytes = storage::max_store_file_bytes;

std::string without_trailing_slash(std::string p);

// The first commit log of `dir` (a state dir or a shard's dir) holding a record after its
// header, or none (also when `dir` has no log dir).
result<std::optional<std::string>> log_with_records(storage::fs& fs, const std::string& dir);

// A name in a sessions dir that is not copied: the store file, write locks, temp files.
bool left_out(std::string_view name);

}  // namespace sessionrt::cluster::state_copy
