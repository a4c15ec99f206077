// owner_directory: which node serves a session now, for a gateway that must decide whether to
// run a session-keyed call itself or forward it (gateway/shard_forward.hpp). A view of one
// consistent read of the cluster's prefix in etcd: the members' addresses (nodes/<id>), the
// owner keys (owners/<agent>/<n>, their revision the shard's epoch) and each agent's shard count
// (its shard table; default_shards_per_agent when the agent has none yet).
// Contract:
//   - CAF-free and without I/O: replace() takes a snapshot (decode_owner_snapshot reads one from a
//     range of cluster_prefix(cluster)); owner_refresh.hpp does the reading. Thread-safe: lookups
//     from any thread, replace from one.
//   - owner_of(key) is a pure lookup on the last snapshot: `local` when this node holds the key's
//     shard, `remote` (the holder's id and address) when a member holds it, `unknown` (with one
//     sentence why) when nobody does: before the first snapshot, a shard that has no owner key
//     (never placed, or its holder's lease ended and nobody took it yet), a holder that is not a
//     member or has no address. A caller answers `unknown` as "retry later", never by serving it.
//   - The view may lag etcd by the refresh period: a node asked for a shard it no longer holds
//     must refuse (fencing), so a stale answer costs a retry, not a second writer.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cluster/etcd_client.hpp"
#include "cluster/shard_id.hpp"

namespace sessionrt::cluster {

struct owner_snapshot {
  std::int64_t revision = 0;                          // etcd's revision of the read
  std::map<std::string, std::string> addresses;       // member id -> "host:port"
  struct holder {
    std::string node;
    std::int64_t epoch = 0;
  };
  std::map<shard_id, holder> owners;                  // held shards
  std::map<std::string, int> shards_per_agent;        // from the shard tables
  std::size_t skipped = 0;                            // keys under the prefix that did not decode
};

// The snapshot a range of cluster_prefix(cluster) gives; keys that do not decode are skipped
// and counted (cluster status reports them by name).
owner_snapshot decode_owner_snapshot(const etcd_range_result& range, const std::string& cluster);

struct owner_answer {
  enum class where { local, remote, unknown };
  where at = where::unknown;
  shard_id shard;
  std::string node;     // local / remote: the holder
  std::string address;  // remote: where its gateway listens
  std::int64_t epoch = 0;
  std::string why;      // unknown: why nobody serves it now
};

class owner_directory {
 public:
  explicit owner_directory(std::string self_node_id) : self_(std::move(self_node_id)) {}

  void replace(owner_snapshot snapshot);
  owner_answer owner_of(std::string_view session_key) const;
  // 0 before the first snapshot.
  std::int64_t revision() const;
  // The members and their addresses in the last snapshot (this node included); empty before it.
  std::map<std::string, std::string> members() const;
  const std::string& self() const { return self_; }

 private:
  std::string self_;
  mutable std::mutex mu_;
  std::shared_ptr<const owner_snapshot> snap_;
};

}  // namespace sessionrt::cluster
