// shard_claims: who holds each shard now. A node takes shard s by creating
// /sessionrt/<cluster>/owners/<agent>/<n> = {"node":<id>} under its lease, in a transaction
// that requires the key to be absent, so a shard never has two holders. The key's revision
// (the revision of that transaction) is the shard's EPOCH: every new holder gets a higher one,
// as etcd's revisions only rise. The key goes when its holder releases it, or with the lease
// (expired, revoked), and only then can another node take the shard.
//
// Contract: callbacks on the HTTP loop's thread. Errors:
//   acquire: locked ("shard main/17 is held by n2 at epoch 42 ...") when another node or lease
//            holds it; not_found when `lease` expired; etcd_client's otherwise. Taking a shard
//            this node already holds under the same lease gives its claim back (same epoch).
//   release: deletes the key only if it is still at the claim's epoch; locked when another
//            holder took it since (this node was fenced), not_found when it is already gone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/etcd_client.hpp"
#include "cluster/shard_id.hpp"

namespace sessionrt::cluster {

struct shard_claim {
  shard_id shard;
  std::string node;
  std::int64_t epoch = 0;
  std::int64_t lease = 0;
};

// An owner key's kv as a claim; corrupt when the key or value is not one.
result<shard_claim> decode_claim(const etcd_kv& kv, const std::string& cluster);

class shard_claims {
 public:
  shard_claims(const etcd_client& etcd, std::string cluster) : etcd_(etcd), cluster_(std::move(cluster)) {}

  void acquire(const shard_id& shard, const std::string& node, std::int64_t lease, etcd_client::done<shard_claim> done) const;
  void release(const shard_claim& claim, etcd_client::done_status done) const;
  void current(const shard_id& shard, etcd_client::done<std::optional<shard_claim>> done) const;
  // Every claim of the cluster, by agent and shard index.
  void list(etcd_client::done<std::vector<shard_claim>> done) const;

 private:
  etcd_client etcd_;
  std::string cluster_;
};

}  // namespace sessionrt::cluster
