// placement_planner: one round of placing an agent's shards on the cluster's nodes. Pure: a
// function of (current owners, live nodes, limits); no etcd, no clock.
//
// Rules of a round:
//   - Every shard ends with exactly one owner, an active node (a draining node is leaving: it
//     keeps what it has until moved, gets nothing new). Each shard changes at most once in a
//     round, so the plan never assigns a shard twice.
//   - Shards with no live owner (never placed, or their node left the membership: its lease
//     expired) are ASSIGNED, without limit: nobody serves them, waiting would only delay the
//     failover.
//   - Shards on a live node are MOVED only to balance (off a draining node first, then off
//     nodes above their share) and at most max_moves() of them per round: 10% of the shards
//     (Akka / Pekko cluster sharding's default rebalance limit), at least 1. A move is a
//     handoff: its owner must stop serving the shard first, so rounds are rate-limited.
//   - Balanced = each active node holds floor(N/k) or ceil(N/k) shards; the nodes that already
//     hold more get the ceil, so a balanced table is left alone (no moves).
//   - Ties are broken by node id, so the same input always gives the same plan.
// With no active node the plan changes nothing (complete = false).
#pragma once
#include <string>
#include <vector>

namespace sessionrt::cluster {

struct node_view {
  std::string id;
  bool draining = false;
};

struct shard_change {
  int index = 0;
  std::string from;  // "" = no live owner
  std::string to;
};

struct placement_plan {
  std::vector<std::string> owners;         // the table after this round
  std::vector<shard_change> assignments;   // shards that had no live owner
  std::vector<shard_change> moves;         // shards taken from a live owner (<= max_moves)
  bool complete = false;                   // balanced after this round: the next one plans nothing
  bool changed() const { return !assignments.empty() || !moves.empty(); }
};

class placement_planner {
 public:
  explicit placement_planner(double max_move_fraction = 0.10) : fraction_(max_move_fraction) {}

  int max_moves(int shards) const;
  placement_plan plan(const std::vector<std::string>& owners, const std::vector<node_view>& nodes) const;

 private:
  double fraction_;
};

}  // namespace sessionrt::cluster
