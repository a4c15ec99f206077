// shard_table: which node should own each of one agent's shards, as kept in etcd at
// /sessionrt/<cluster>/shards/<agentId>: {"agent":"main","shards":256,"owners":["n1","",...]}
// (owners[i] is shard i's node, "" = none yet). The table says where a shard SHOULD live; the
// owner key (shard_claims.hpp) says who holds it now. A table changes only by a transaction on
// its revision (shard_table_store.hpp), so two planners never both win.
// decode refuses a table whose owner count is not its shard count, an id that is not a node
// id, or a shard count outside 1..max_shards_per_agent (errc::corrupt, naming the key).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::cluster {

struct shard_table {
  std::string agent;
  std::vector<std::string> owners;
  std::int64_t revision = 0;  // the key's mod revision when read; 0 = not in etcd yet

  int shards() const { return static_cast<int>(owners.size()); }
};

shard_table empty_shard_table(std::string agent, int shards);
std::string encode_shard_table(const shard_table& t);
// `key` names the table in errors.
result<shard_table> decode_shard_table(std::string_view text, std::string_view key);

}  // namespace sessionrt::cluster
