// cluster_nodes: the members of a cluster as etcd lists them, from the keys under
// /sessionrt/<cluster>/nodes/ (node_membership.hpp writes them under each node's lease, so a
// node whose lease expired is no longer listed). A record: {"address", "build", "draining"?}
// ("draining": true once a node announced it is leaving; it keeps its shards until moved).
// A key whose value does not parse is reported (errc::corrupt naming the key), not skipped:
// a member nobody can read would otherwise hold shards nobody can see.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/etcd_client.hpp"
#include "cluster/placement_planner.hpp"

namespace sessionrt::cluster {

struct node_record {
  std::string id;
  std::string address;
  std::string build;
  bool draining = false;
  std::int64_t lease = 0;
};

result<node_record> decode_node_record(const etcd_kv& kv, const std::string& cluster);
std::vector<node_view> node_views(const std::vector<node_record>& nodes);

// Every member, in id order.
void list_nodes(const etcd_client& etcd, const std::string& cluster, etcd_client::done<std::vector<node_record>> done);

}  // namespace sessionrt::cluster
