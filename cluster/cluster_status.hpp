// cluster_status: what `sessionrt cluster status` shows, read from etcd in one pass and
// rendered as text or JSON. The snapshot is read key range by key range (nodes, shard tables,
// owner keys, then each node lease's TTL), so figures from different ranges may be a few
// revisions apart on a cluster that is changing; each range is consistent in itself.
//
// Figures: per node its address, build, lease and seconds left, shards the tables assign it,
// shards it holds (owner keys) and the epochs of those; per agent the table's revision, shards
// with no owner and shards whose table owner is no longer a member; handoffs in flight = shards
// a table assigns to a live node other than the one holding the owner key.
// JSON: {"cluster","etcd","revision","nodes":[...],"agents":[...],"shards":{...},
//        "handoffsInFlight","owners":[{"shard","node","epoch"}]} (camelCase as OpenClaw's JSON).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "cluster/blocking_etcd.hpp"
#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

struct cluster_snapshot {
  std::string cluster;
  std::string endpoint;
  std::int64_t revision = 0;                     // of the last range read
  std::vector<node_record> nodes;                // id order
  std::map<std::int64_t, std::int64_t> lease_ttl_s;  // node lease -> seconds left (-1: expired)
  std::vector<shard_table> tables;               // agent order
  std::vector<shard_claim> claims;               // (agent, index) order
};

result<cluster_snapshot> read_cluster_snapshot(const blocking_etcd& etcd, const std::string& cluster);

boost::json::object status_json(const cluster_snapshot& s);
std::string status_text(const cluster_snapshot& s);

}  // namespace sessionrt::cluster
