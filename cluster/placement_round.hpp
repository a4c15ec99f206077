// placement_round: one round of placement for one agent, against etcd: list the members, read
// the agent's shard table, plan (placement_planner), and write the new table by a transaction
// on the revision read. A round that plans nothing writes nothing.
// Errors: already_exists when another planner wrote the table since it was read (the round
// changed nothing; run it again), and those of list_nodes / shard_table_store. A round run by
// every node at once is safe (one write wins per revision); which node plans is left to the
// caller (the later leader election).
#pragma once
#include <string>

#include "cluster/cluster_nodes.hpp"
#include "cluster/etcd_client.hpp"
#include "cluster/placement_planner.hpp"
#include "cluster/shard_table.hpp"

namespace sessionrt::cluster {

struct round_outcome {
  placement_plan plan;
  std::int64_t read_revision = 0;     // of the table planned from (0: none yet)
  std::int64_t written_revision = 0;  // 0 when the plan changed nothing
};

void run_placement_round(const etcd_client& etcd, const std::string& cluster, const std::string& agent,
                         int shards_per_agent, const placement_planner& planner, etcd_client::done<round_outcome> done);

}  // namespace sessionrt::cluster
