// shard_id: which shard a session belongs to. Every agent's sessions are split into a fixed
// number of shards (256 by default) by a hash of the session's store key, so one agent's
// sessions spread over every node; the shard, not the session, is what a node owns.
//
// Contract:
//   - shard_of is a pure function of (store key, shards per agent) and never changes between
//     builds: FNV-1a 64 of the normalized key's bytes, modulo the count (a change would move
//     every session at an upgrade). The agent is the key's `agent:<id>:` prefix, else "main"
//     (keys outside that form, as the reference's global ones, belong to the default agent).
//   - The number of shards per agent is fixed for the life of a cluster's state (it is stored
//     in each shard table, shard_table.hpp); changing it is a migration, not a setting.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace sessionrt::cluster {

inline constexpr int default_shards_per_agent = 256;
inline constexpr int max_shards_per_agent = 4096;

struct shard_id {
  std::string agent;
  int index = 0;
  friend bool operator==(const shard_id&, const shard_id&) = default;
  friend auto operator<=>(const shard_id&, const shard_id&) = default;
};

std::uint64_t fnv1a64(std::string_view bytes);
shard_id shard_of(std::string_view session_key, int shards_per_agent = default_shards_per_agent);
std::string to_string(const shard_id& s);  // "main/17"

}  // namespace sessionrt::cluster
