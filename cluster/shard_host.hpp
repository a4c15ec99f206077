// shard_host: the runtime's side of the shards a node holds (docs/cluster.md, "Serving a
// shard's sessions"). When the node takes a shard's owner key at epoch E, acquired() opens the
// shard's state through the fence (open_shard_state: the stamp E before anything is written,
// the single node's replay, reconcile and torn-tail repair) and has the runtime serve the
// shard's sessions from it (runtime::open_shard): a store actor and commit log of its own, over
// the shard's guarded files. What arrives for the shard while it opens waits in the runtime's
// router and is delivered in arrival order. released() (the node's drain hook) closes it: the
// shard's keys are held, its sessions passivate after their running turn (bounded by the close
// deadline), the store is written, the log checkpointed; then the files are sealed (nothing
// more is written through them) and the node may release the key. fenced() (the key is gone
// without a release: lease lost, or taken) seals first, then closes: nothing is written any
// more, and what the shard's sessions still hold is for the next owner's replay to settle.
// A key of a shard the node does not serve is refused by the runtime with errc::not_owner.
//
// Contract:
//   - The runtime was started with runtime_options::shard_of = the index of cluster::shard_of
//     for `shards_per_agent` (shard_index_fn), on the cluster dir as its state dir.
//   - One caller thread at a time (the cluster node's); open() and the figures from any thread.
//   - The runtime, the fs, the clock and the permit outlive this object; this object outlives
//     the runtime's stop (the shards' files are the actors' until then).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/guarded_fs.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_id.hpp"
#include "cluster/shard_state.hpp"
#include "cluster/write_permit.hpp"
#include "messages/clock.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::cluster {

struct shard_host_options {
  std::string cluster_dir;  // every node's state dir: the shards are under <cluster_dir>/shards
  bool batch_log = true;    // storage.durability batch: each shard writes its own commit log
  bool repair_tails = true;
  std::int64_t close_deadline_ms = 5000;  // how long a close waits for the shard's turns
  int shards_per_agent = default_shards_per_agent;  // shard_index_fn's (maintenance shares the bounds)
};

// runtime_options::shard_of for a cluster of `shards_per_agent` shards per agent.
std::function<int(std::string_view)> shard_index_fn(int shards_per_agent);

class shard_host {
 public:
  shard_host(runtime::runtime& rt, storage::fs& fs, clock& wall, const write_permit& permit,
             shard_host_options options);
  shard_host(const shard_host&) = delete;
  shard_host& operator=(const shard_host&) = delete;

  // Opens the shard this node took at c.epoch and serves it; the error when it could not (the
  // runtime then refuses its keys, and what waited is refused).
  status acquired(const shard_claim& c);
  // The shard is about to be opened (the node took its key): its keys wait for acquired().
  void opening(const shard_claim& c);
  // Closes a served shard before its key goes (not served: nothing to do); the close's error.
  status released(const shard_id& shard);
  // The key went without a release: sealed at once, then closed.
  void fenced(const shard_id& shard, const std::string& why);

  std::vector<shard_id> serving() const;
  // The open report of a served shard (tests, logs); nullptr when not served.
  std::shared_ptr<const opened_shard> opened(const shard_id& shard) const;

 private:
  status close(const shard_id& shard, const std::string& why, bool seal_first);

  runtime::runtime& rt_;
  storage::fs& fs_;
  clock& wall_;
  const write_permit& permit_;
  shard_host_options opt_;
  mutable std::mutex mu_;
  std::map<shard_id, std::shared_ptr<opened_shard>> open_;
  // Closed shards' files: kept (sealed) until this object goes, since an actor that did not
  // stop by the deadline may still hold them.
  std::vector<std::shared_ptr<guarded_fs>> closed_files_;
};

}  // namespace sessionrt::cluster
