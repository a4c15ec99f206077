#include "cluster/owner_directory.hpp"

#include <fmt/format.h>

#include "cluster/cluster_keys.hpp"
#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

owner_snapshot decode_owner_snapshot(const etcd_range_result& range, const std::string& cluster) {
  owner_snapshot s;
  s.revision = range.revision;
  const std::string nodes = nodes_prefix(cluster), owners = owners_prefix(cluster), tables = shard_tables_prefix(cluster);
  for (const auto& kv : range.kvs) {
    if (kv.key.rfind(nodes, 0) == 0) {
      auto n = decode_node_record(kv, cluster);
      if (n) s.addresses[n->id] = n->address;
      else ++s.skipped;
    } else if (kv.key.rfind(owners, 0) == 0) {
      auto c = decode_claim(kv, cluster);
      if (c) s.owners[c->shard] = {c->node, c->epoch};
      else ++s.skipped;
    } else if (kv.key.rfind(tables, 0) == 0) {
      auto t = decode_shard_table(kv.value, kv.key);
      if (t && !t->agent.empty()) s.shards_per_agent[t->agent] = t->shards();
      else ++s.skipped;
    }
  }
  return s;
}

void owner_directory::replace(owner_snapshot snapshot) {
  auto next = std::make_shared<const owner_snapshot>(std::move(snapshot));
  std::lock_guard lock(mu_);
  snap_ = std::move(next);
}

std::int64_t owner_directory::revision() const {
  std::lock_guard lock(mu_);
  return snap_ ? snap_->revision : 0;
}

std::map<std::string, std::string> owner_directory::members() const {
  std::lock_guard lock(mu_);
  return snap_ ? snap_->addresses : std::map<std::string, std::string>{};
}

owner_answer owner_directory::owner_of(std::string_view session_key) const {
  std::shared_ptr<const owner_snapshot> s;
  {
    std::lock_guard lock(mu_);
    s = snap_;
  }
  owner_answer a;
  a.shard = shard_of(session_key);
  if (!s) {
    a.why = "this node has not read the cluster's owner keys from etcd yet";
    return a;
  }
  // The agent's own shard count, when its table says another than the default.
  if (auto n = s->shards_per_agent.find(a.shard.agent); n != s->shards_per_agent.end() && n->second != default_shards_per_agent)
    a.shard = shard_of(session_key, n->second);
  const auto held = s->owners.find(a.shard);
  if (held == s->owners.end()) {
    a.why = fmt::format("shard {} has no owner now (being placed, handed off or failed over)", to_string(a.shard));
    return a;
  }
  a.node = held->second.node;
  a.epoch = held->second.epoch;
  if (a.node == self_) {
    a.at = owner_answer::where::local;
    return a;
  }
  const auto member = s->addresses.find(a.node);
  if (member == s->addresses.end() || member->second.empty()) {
    a.why = fmt::format("shard {} is held by node {}, which is not a member with an address now", to_string(a.shard), a.node);
    return a;
  }
  a.at = owner_answer::where::remote;
  a.address = member->second;
  return a;
}

}  // namespace sessionrt::cluster
