#include "cluster/shard_table_store.hpp"

#include <fmt/format.h>

#include "cluster/cluster_keys.hpp"

namespace sessionrt::cluster {

void shard_table_store::read(const std::string& agent, int shards_if_absent, etcd_client::done<shard_table> done) const {
  if (auto bad = check_name("agent id", agent); !bad.ok()) return done(bad);
  const std::string key = shard_table_key(cluster_, agent);
  etcd_.range(key, [agent, key, shards_if_absent, done = std::move(done)](result<etcd_range_result> r) {
    if (!r) return done(r.error());
    if (r->kvs.empty()) return done(empty_shard_table(agent, shards_if_absent));
    auto t = decode_shard_table(r->kvs[0].value, key);
    if (!t) return done(t.error());
    if (t->agent != agent)
      return done(status(errc::corrupt, fmt::format("shard table {} names agent '{}'", key, t->agent)));
    t->revision = r->kvs[0].mod_revision;
    done(std::move(*t));
  });
}

void shard_table_store::write(const shard_table& next, etcd_client::done<std::int64_t> done) const {
  if (auto bad = check_name("agent id", next.agent); !bad.ok()) return done(bad);
  const std::string key = shard_table_key(cluster_, next.agent);
  etcd_txn t;
  t.compare.push_back(next.revision == 0 ? etcd_compare::absent(key) : etcd_compare::modified_at(key, next.revision));
  t.success.push_back(etcd_op::put(key, encode_shard_table(next)));
  t.failure.push_back(etcd_op::get(key));
  const std::int64_t read_at = next.revision;
  etcd_.txn(t, [key, read_at, done = std::move(done)](result<etcd_txn_result> r) {
    if (!r) return done(r.error().with_context(fmt::format("writing shard table {}", key)));
    if (r->succeeded) return done(r->revision);
    std::int64_t now = 0;
    if (!r->ranges.empty() && !r->ranges[0].kvs.empty()) now = r->ranges[0].kvs[0].mod_revision;
    done(status(errc::already_exists,
                fmt::format("txn failed: shard table {} changed since revision {} (now {}): another planner wrote it "
                            "first; read it again and plan again", key, read_at, now == 0 ? "deleted" : std::to_string(now))));
  });
}

void shard_table_store::list(etcd_client::done<std::vector<shard_table>> done) const {
  const std::string prefix = shard_tables_prefix(cluster_);
  etcd_.range_prefix(prefix, [prefix, done = std::move(done)](result<etcd_range_result> r) {
    if (!r) return done(r.error());
    std::vector<shard_table> out;
    for (const auto& kv : r->kvs) {
      auto t = decode_shard_table(kv.value, kv.key);
      if (!t) return done(t.error());
      if (t->agent != name_under(kv.key, prefix))
        return done(status(errc::corrupt, fmt::format("shard table {} names agent '{}'", kv.key, t->agent)));
      t->revision = kv.mod_revision;
      out.push_back(std::move(*t));
    }
    done(std::move(out));
  });
}

}  // namespace sessionrt::cluster
