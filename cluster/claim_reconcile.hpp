// claim_reconcile: what one node must do with owner keys so that what it holds follows the
// shard tables. Pure: a function of (the tables, the owner keys etcd lists, what the node
// believes it holds, its lease, its permit); no etcd, no clock.
//
// Rules:
//   - ACQUIRE a shard the table gives this node whose owner key is absent, only while the node
//     may claim (joined, permit valid, not draining). A shard the table gives it that another
//     node still holds is left alone: that holder releases it after draining it (handoff), or
//     its lease ends (failover); only then is the key absent.
//   - RELEASE a shard this node holds (the key is under its lease) that the table gives to
//     another node, or every held shard when the node is draining.
//   - FENCED: a shard the node believes it holds whose key is gone or belongs to another
//     epoch (lease ended, another node took it). The node must stop writing it at once and
//     forget it; nothing is released (there is nothing left to release).
//   - ADOPT: a key under this node's lease that it does not know of (an acquire whose answer
//     was lost after etcd applied it): it is held, so it is now counted (and then released or
//     kept by the rules above).
// Each shard appears in at most one list. Output is in (agent, index) order.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/shard_claims.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

struct claim_actions {
  std::vector<shard_id> acquire;
  std::vector<shard_claim> release;
  std::vector<shard_claim> fenced;
  std::vector<shard_claim> adopt;
  bool empty() const { return acquire.empty() && release.empty() && fenced.empty() && adopt.empty(); }
};

struct claim_inputs {
  std::string node;
  std::int64_t lease = 0;     // 0: not joined (nothing is held, nothing may be taken)
  bool may_claim = false;     // joined, permit valid, not draining
  bool draining = false;
  std::vector<shard_table> tables;
  std::vector<shard_claim> in_etcd;          // every owner key of the cluster
  std::map<shard_id, shard_claim> held;      // what the node believes it holds
};

claim_actions reconcile_claims(const claim_inputs& in);

}  // namespace sessionrt::cluster
