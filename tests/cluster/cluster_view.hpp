// cluster_view: what etcd says of a cluster at one time (members, leases, the main agent's shard
// table, owner keys, the placement leader), and the two states the ownership harness and
// bench/cluster_bench wait for: settled on a set of nodes, and every shard held by live members.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/blocking_etcd.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_table.hpp"
#include "gateway/gateway_client.hpp"
#include "messages/status.hpp"

namespace sessionrt::testing {

struct cluster_view {
  std::set<std::string> members;
  std::map<std::string, std::string> address;  // member -> host:port
  std::map<std::string, std::int64_t> lease;   // member -> its lease
  bool any_draining = false;
  cluster::shard_table table;
  std::vector<cluster::shard_claim> claims;
  std::string leader;
  std::string holder(int shard) const;  // "" when nobody holds it
};

// The members, the table of `shards` shards and the owner keys; nullopt when a read failed.
std::optional<cluster_view> read_cluster_view(const cluster::blocking_etcd& etcd, const std::string& cluster,
                                              int shards);

// Settled on exactly `ids`: a balanced table on them, every shard held by its table owner under
// that owner's current lease.
bool settled_on(const cluster_view& v, const std::set<std::string>& ids, int shards);

// Every shard held by a live member of `ids`, under its current lease (not necessarily balanced).
bool all_held_by(const cluster_view& v, const std::set<std::string>& ids, int shards);

// A gateway client connected to a node at `address` ("host:port", as the node registers it) with
// `token` and `scopes`.
result<std::unique_ptr<gateway::gateway_client>> client_at(const std::string& address, const std::string& token,
                                                           std::vector<std::string> scopes);

}  // namespace sessionrt::testing
