// cluster_keys: where a cluster keeps its state in etcd, one prefix per cluster:
//   /sessionrt/<cluster>/nodes/<nodeId>          {address, build}, under the node's lease
//   /sessionrt/<cluster>/shards/<agentId>        the agent's shard table (shard_table.hpp)
//   /sessionrt/<cluster>/owners/<agentId>/<n>    {node}, under the owner's lease; its revision
//                                                is the shard's epoch (shard_claims.hpp)
//   /sessionrt/<cluster>/leader                  {node}, under the placement leader's lease
// Names are checked before they reach a key: a cluster name or node id is 1-64 characters of
// [A-Za-z0-9._-] beginning with a letter or digit, so no name can reach another's prefix.
#pragma once
#include <string>
#include <string_view>

#include "messages/status.hpp"

namespace sessionrt::cluster {

inline constexpr std::size_t max_name_length = 64;

// ok, or invalid_argument naming `what` ("cluster name", "node id") and the rule.
status check_name(std::string_view what, std::string_view name);

std::string cluster_prefix(std::string_view cluster);                 // "/sessionrt/<c>/"
std::string nodes_prefix(std::string_view cluster);                   // "/sessionrt/<c>/nodes/"
std::string node_key(std::string_view cluster, std::string_view node_id);
std::string shard_tables_prefix(std::string_view cluster);            // "/sessionrt/<c>/shards/"
std::string shard_table_key(std::string_view cluster, std::string_view agent_id);
std::string owners_prefix(std::string_view cluster);                  // "/sessionrt/<c>/owners/"
std::string owner_key(std::string_view cluster, std::string_view agent_id, int shard_index);
// The placement leader: {"node"}, created only when absent, under the leader's lease
// (cluster_node.hpp): the one node that runs placement rounds.
std::string leader_key(std::string_view cluster);                     // "/sessionrt/<c>/leader"

// The last segment of a key under `prefix` ("n1" of ".../nodes/n1"); "" when `key` is not
// directly under it.
std::string_view name_under(std::string_view key, std::string_view prefix);

}  // namespace sessionrt::cluster
