// shard_layout: where each shard's state lives in a cluster's state dir (docs/cluster.md, "The
// per-shard layout"). A shard's directory is itself an ordinary single-node state dir holding one
// agent, so a new owner opens it exactly as a node opens its state dir at start-up, and ownership
// moves without copying:
//   <cluster dir>/shards/<agent>/<nnn>/                       the shard's state dir
//     epoch                                                    the fencing stamp (shard_epoch_file)
//     state-id, commit-log/                                    its own commit log (storage/commit_log)
//     agents/<agent>/sessions/sessions.json, <sessionId>.jsonl the OpenClaw layout of its rows
// <nnn> is the shard's index in decimal, zero-padded to three digits ("017"; "1024" above 999);
// the agent id must pass storage::check_agent_id. Pure string work except list_shards.
// list_shards() reads <cluster dir>/shards: the shards in (agent, index) order, and the names it
// skipped (not an agent dir, not a canonical shard number) so a caller can say so. A missing
// shards dir is an empty cluster, not an error.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/shard_id.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::cluster {

std::string shards_root(std::string_view cluster_dir);  // <cluster dir>/shards
std::string shard_dir_name(int index);                  // 17 -> "017"
// The index a directory name stands for: only the canonical spelling of 0..max_shards_per_agent-1
// ("017", never "17" nor "0017"), so one shard can never have two directories.
std::optional<int> parse_shard_dir_name(std::string_view name);

// <cluster dir>/shards/<agent>/<nnn>; unsafe_path for an unsafe agent id, invalid_argument for an
// index outside 0..max_shards_per_agent-1.
result<std::string> shard_dir(std::string_view cluster_dir, const shard_id& shard);
// <shard dir>/agents/<agent>/sessions and .../sessions.json
result<std::string> shard_sessions_dir(std::string_view cluster_dir, const shard_id& shard);
result<std::string> shard_store_path(std::string_view cluster_dir, const shard_id& shard);

struct listed_shard {
  shard_id shard;
  std::string dir;  // the shard's state dir
};

struct shard_listing {
  std::vector<listed_shard> shards;  // by agent, then index
  std::vector<std::string> skipped;  // paths under shards/ that are not shard dirs
};

result<shard_listing> list_shards(storage::fs& fs, const std::string& cluster_dir);

}  // namespace sessionrt::cluster
