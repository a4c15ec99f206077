// cluster_node: one gateway's part in a cluster: it keeps a lease (node_membership), elects one
// placement leader, and claims and releases the owner keys of the shards the tables give it.
// CAF-free; etcd is spoken through etcd_client, each call waited for on the node's own thread.
//
// One tick (tick(); run() calls it every tick_ms on a thread of its own):
//   1. Membership: when etcd said the lease is gone, every held shard is FENCED (event, dropped:
//      the node must not write them) and the node joins again with a new lease.
//   2. Election: /sessionrt/<c>/leader = {"node"} is created only when absent, under the
//      node's lease; the node whose lease holds it is the leader until that lease ends.
//   3. The leader runs placement rounds (placement_round.hpp), one per agent, when the set of
//      members or their draining flags changed since its last round, when the last round left
//      more to move and no handoff is in flight (each table owner holds its shards), and every
//      placement_every_ms besides. So a rebalance moves at most 10 % of the shards per round,
//      and the next round waits for the previous round's handoffs.
//   4. Claims (claim_reconcile.hpp): acquire the free shards the tables give this node (only
//      while its write permit is valid), release the ones they give to another node (after the
//      drain hook), fence what the node believed it held and no longer does.
// shutdown(): the thread stops, the node key is marked draining (the leader assigns it
// nothing), every held shard is drained and released, and the lease is revoked, which takes
// the leader key with it. The others then take the shards at their next round (no live owner:
// assigned without the 10 % limit).
//
// Contract:
//   - acquired / fenced run on the node's thread, in the tick (an open replays the shard's log).
//   - The drain hook runs before a shard's owner key is released; it must stop taking turns for
//     the shard, finish or cancel what runs and make it durable, then call done (from any
//     thread). Null: done at once. Today the executable passes null (the session path does not
//     route by shard yet), so a release is immediate.
//   - publish receives shard.acquired / shard.released / shard.fenced (lifecycle_payloads.hpp),
//     on the node's thread; it must not block.
//   - check_write() is what a writer asks before each write of a shard: the permit (TTL/2 since
//     the last renewal) and that the node still holds the shard's key.
//   - tick() and shutdown() from one thread at a time (run()'s thread, or a test's); held(),
//     figures(), metrics_text() and check_write() from any thread.
//   - The etcd client's http_loop and the alarms must outlive the node.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_nodes.hpp"
#include "cluster/etcd_client.hpp"
#include "cluster/node_membership.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_id.hpp"
#include "messages/clock.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::cluster {

struct cluster_node_options {
  std::string cluster;
  std::string node_id;
  std::string address;  // "host:port" of this node's gateway
  std::string build;
  std::int64_t ttl_s = 10;
  std::vector<std::string> agents{"main"};  // whose shard tables the leader places
  int shards_per_agent = default_shards_per_agent;
  std::int64_t tick_ms = 0;                 // 0: TTL/4, within 100..1000 ms
  std::int64_t placement_every_ms = 5000;   // a leader's round at least this often
};

struct cluster_node_hooks {
  std::function<void(const shard_id&, std::function<void()> done)> drain;
  // A shard's key was taken (or found held under this lease): the node serves the shard from
  // its state (shard_host::acquired) before shard.acquired is published. An error releases the
  // key again (the next tick takes it anew, at a new epoch, and retries). Null: nothing to open.
  std::function<status(const shard_claim&)> acquired;
  // Called for every shard of a batch just taken, before the first of them is opened: what
  // arrives for them meanwhile waits (shard_host::opening). Null: nothing to announce.
  std::function<void(const shard_claim&)> opening;
  // A held shard's key went without a release (lease lost, or taken): the node must write it
  // no more (shard_host::fenced). Null: nothing to do.
  std::function<void(const shard_claim&, const std::string& why)> fenced;
  std::function<void(lifecycle_event)> publish;
  const clock* wall = nullptr;  // the events' time; null: storage::real_clock()
};

struct cluster_node_figures {
  std::string phase;                 // membership_phase
  bool leader = false;
  std::int64_t lease = 0;
  std::int64_t nodes = 0;            // members at the last tick
  std::int64_t shards_held = 0;
  std::int64_t epoch_min = 0, epoch_max = 0;  // of the held shards (0: none)
  std::int64_t permit_age_ms = -1;   // since the last renewal was sent; -1: no lease
  bool permit_valid = false;
  std::uint64_t joins = 0, lease_losses = 0;
  std::uint64_t acquired = 0, released = 0, fenced = 0;
  std::uint64_t rounds = 0, shards_placed = 0;  // tables this node wrote as leader, shards they changed
  std::uint64_t tick_errors = 0;
  std::uint64_t open_failures = 0;  // shards taken whose state could not be opened (key released again)
};

class cluster_node {
 public:
  cluster_node(const etcd_client& etcd, cluster_node_options options, cluster_node_hooks hooks, const clock& monotonic,
               alarms& timer);
  // Stops the thread; does not leave (as a crash: etcd expires the lease after the TTL).
  ~cluster_node();
  cluster_node(const cluster_node&) = delete;
  cluster_node& operator=(const cluster_node&) = delete;

  // The first join (errors: node_membership's join, e.g. already_exists for a live id).
  status join();
  // One pass as above; the first error it met (the pass goes on where it can).
  status tick();
  // tick() every tick_ms on a thread of its own, until shutdown().
  void run();
  // Hands everything off and leaves, within `deadline_ms` (a drain past it is not waited for:
  // the lease is revoked anyway, and the shard's next owner fences this one).
  status shutdown(std::int64_t deadline_ms);

  status check_write(const shard_id& shard) const;
  std::vector<shard_claim> held() const;
  bool is_leader() const;
  cluster_node_figures figures() const;
  // The figures in Prometheus text (sessionrt_cluster_*), for /metrics.
  std::string metrics_text() const;
  const node_membership& membership() const { return *membership_; }
  std::int64_t tick_ms() const { return tick_ms_; }

 private:
  status rejoin_if_lost();
  status elect(std::int64_t lease);
  status lead(const std::vector<node_record>& nodes, const std::vector<shard_claim>& claims);
  status reconcile(const std::vector<shard_claim>& claims);
  status mark_draining();
  void release_all(const std::string& reason, std::int64_t deadline_ms);
  bool drain(const shard_id& shard, std::int64_t deadline_ms);
  void emit(std::string_view type, const shard_claim& c, const std::string& reason);
  // The acquired hook for a claim just taken; false when it failed (the key was released).
  bool serve(const shard_claim& c);
  void fence(const shard_claim& c, const std::string& why);

  etcd_client etcd_;
  cluster_node_options opt_;
  cluster_node_hooks hooks_;
  const clock& mono_;
  std::unique_ptr<node_membership> membership_;
  shard_claims claims_;
  std::int64_t tick_ms_;

  mutable std::mutex mu_;
  std::map<shard_id, shard_claim> held_;
  bool leader_ = false;
  bool draining_ = false;
  cluster_node_figures counts_;
  // The leader's memory of its last rounds.
  std::string last_members_;
  std::int64_t last_round_ms_ = 0;
  bool last_round_complete_ = true;

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sessionrt::cluster
