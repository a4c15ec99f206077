// placement_wait: what the two-node process tests (forwarding, remote events, the hold) read from
// etcd and pick from it: each member's gateway address and each shard's holder, a session key
// whose shard a given node holds, and an operator.admin client on a node. Every wait is bounded.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cluster/blocking_etcd.hpp"
#include "gateway/forward_rule.hpp"
#include "gateway/gateway_client.hpp"
#include "messages/status.hpp"

namespace sessionrt::testing {

struct placement_view {
  std::map<std::string, std::string> address;  // node -> host:port
  std::map<int, std::string> holder;            // shard index -> node
};

// Waits until the members of `cluster` are exactly the nodes of `expect`, every shard of the
// main agent is held, and each node holds expect[node] shards (0: at least one).
std::optional<placement_view> wait_placement(const cluster::blocking_etcd& etcd, const std::string& cluster,
                                             const std::map<std::string, int>& expect, std::chrono::seconds bound);

// The first "agent:main:<stem>-<i>" whose shard `node` holds.
std::string key_held_by(const placement_view& v, const std::string& node, const std::string& stem);

// A client on `node`'s gateway with the cluster's token and operator.admin.
result<std::unique_ptr<gateway::gateway_client>> admin_client(const placement_view& v, const std::string& node,
                                                              const std::string& token);

}  // namespace sessionrt::testing
