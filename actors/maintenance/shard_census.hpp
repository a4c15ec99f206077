// shard_census: what one shard of an agent holds, read from its sessions dir in the cluster's
// shared state dir (<cluster>/shards/<agent>/<nnn>/agents/<agent>/sessions), for the census
// shard_bounds.hpp decides with: its unarchived rows (the members of sessions.json without an
// archivedAt; not the store loader's full parse, a count is all the census needs) and the bytes
// of the regular files directly in the dir. Blocking I/O through `files`: the maintenance actor
// (spawned detached) reads it within a pass.
// A missing dir or store file is an empty shard (one never opened); a dir or store that cannot
// be read or does not parse counts as empty too, and `problem` says why (the caller warns).
#pragma once
#include <string>

#include "actors/maintenance/shard_bounds.hpp"
#include "storage/fs.hpp"

namespace sessionrt::actors {

struct shard_reading {
  shard_load load;
  bool missing = false;  // no dir or no sessions.json
  std::string problem;   // "" when read
};

shard_reading read_shard_load(storage::fs& files, const std::string& sessions_dir);

}  // namespace sessionrt::actors
