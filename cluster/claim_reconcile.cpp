#include "cluster/claim_reconcile.hpp"

namespace sessionrt::cluster {

claim_actions reconcile_claims(const claim_inputs& in) {
  claim_actions out;
  std::map<shard_id, const shard_claim*> keys;
  for (const auto& c : in.in_etcd) keys[c.shard] = &c;

  // What the node holds after fencing and adopting: keys under its own lease.
  std::map<shard_id, shard_claim> mine;
  for (const auto& [shard, believed] : in.held) {
    auto it = keys.find(shard);
    const bool same = it != keys.end() && it->second->epoch == believed.epoch && it->second->lease == believed.lease &&
                      believed.lease == in.lease && in.lease != 0;
    if (same) mine[shard] = believed;
    else out.fenced.push_back(believed);
  }
  if (in.lease != 0)
    for (const auto& c : in.in_etcd)
      if (c.lease == in.lease && c.node == in.node && !in.held.count(c.shard)) {
        out.adopt.push_back(c);
        mine[c.shard] = c;
      }

  std::map<shard_id, std::string> planned;
  for (const auto& t : in.tables)
    for (int i = 0; i < t.shards(); ++i) planned[shard_id{t.agent, i}] = t.owners[static_cast<std::size_t>(i)];

  for (const auto& [shard, claim] : mine) {
    auto p = planned.find(shard);
    const bool ours = p != planned.end() && p->second == in.node;
    if (in.draining || !ours) out.release.push_back(claim);
  }
  if (in.may_claim && !in.draining && in.lease != 0)
    for (const auto& [shard, owner] : planned)
      if (owner == in.node && !keys.count(shard)) out.acquire.push_back(shard);
  return out;
}

}  // namespace sessionrt::cluster
