#include "cluster/placement_round.hpp"

#include "cluster/shard_table_store.hpp"

namespace sessionrt::cluster {

void run_placement_round(const etcd_client& etcd, const std::string& cluster, const std::string& agent,
                         int shards_per_agent, const placement_planner& planner, etcd_client::done<round_outcome> done) {
  list_nodes(etcd, cluster, [etcd, cluster, agent, shards_per_agent, planner,
                             done = std::move(done)](result<std::vector<node_record>> nodes) {
    if (!nodes) return done(nodes.error());
    shard_table_store store(etcd, cluster);
    store.read(agent, shards_per_agent, [store, planner, views = node_views(*nodes),
                                         done = std::move(done)](result<shard_table> table) {
      if (!table) return done(table.error());
      round_outcome out;
      out.read_revision = table->revision;
      out.plan = planner.plan(table->owners, views);
      if (!out.plan.changed()) return done(std::move(out));
      shard_table next = *table;
      next.owners = out.plan.owners;
      store.write(next, [out = std::move(out), done = std::move(done)](result<std::int64_t> rev) mutable {
        if (!rev) return done(rev.error());
        out.written_revision = *rev;
        done(std::move(out));
      });
    });
  });
}

}  // namespace sessionrt::cluster
