#include "cluster/shard_claims.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>

#include "cluster/cluster_keys.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::cluster {

result<shard_claim> decode_claim(const etcd_kv& kv, const std::string& cluster) {
  const std::string prefix = owners_prefix(cluster);
  auto bad = [&](const std::string& why) { return status(errc::corrupt, fmt::format("owner key {}: {}", kv.key, why)); };
  if (kv.key.rfind(prefix, 0) != 0) return bad("not under " + prefix);
  const std::string_view rest = std::string_view(kv.key).substr(prefix.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("no shard index");
  shard_claim c;
  c.shard.agent = std::string(rest.substr(0, slash));
  const std::string_view index = rest.substr(slash + 1);
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), c.shard.index);
  if (ec != std::errc() || end != index.data() + index.size() || c.shard.index < 0) return bad("the shard index is not a number");
  auto o = json::parse_object(kv.value, {64u << 10, 8});
  if (!o) return bad(o.error().message());
  c.node = std::string(json::get_string(*o, "node").value_or(""));
  if (!check_name("node id", c.node).ok()) return bad("\"node\" is not a node id");
  c.epoch = kv.mod_revision;
  c.lease = kv.lease;
  return c;
}

void shard_claims::acquire(const shard_id& shard, const std::string& node, std::int64_t lease,
                           etcd_client::done<shard_claim> done) const {
  if (auto bad = check_name("agent id", shard.agent); !bad.ok()) return done(bad);
  if (auto bad = check_name("node id", node); !bad.ok()) return done(bad);
  const std::string key = owner_key(cluster_, shard.agent, shard.index);
  etcd_txn t;
  t.compare.push_back(etcd_compare::absent(key));
  t.success.push_back(etcd_op::put(key, json::to_compact(boost::json::object{{"node", node}}), lease));
  t.failure.push_back(etcd_op::get(key));
  etcd_.txn(t, [cluster = cluster_, shard, node, lease, done = std::move(done)](result<etcd_txn_result> r) {
    const std::string name = to_string(shard);
    if (!r) return done(r.error().with_context(fmt::format("node {} taking shard {}", node, name)));
    if (r->succeeded) return done(shard_claim{shard, node, r->revision, lease});
    if (r->ranges.empty() || r->ranges[0].kvs.empty())
      return done(status(errc::locked, fmt::format("shard {} changed while node {} took it; try again", name, node)));
    auto held = decode_claim(r->ranges[0].kvs[0], cluster);
    if (!held) return done(held.error());
    if (held->node == node && held->lease == lease) return done(std::move(*held));
    done(status(errc::locked, fmt::format("shard {} is held by node {} at epoch {} (lease {}); it becomes free when that "
                                          "node releases it or its lease expires", name, held->node, held->epoch,
                                          lease_hex(held->lease))));
  });
}

void shard_claims::release(const shard_claim& claim, etcd_client::done_status done) const {
  const std::string key = owner_key(cluster_, claim.shard.agent, claim.shard.index);
  etcd_txn t;
  t.compare.push_back(etcd_compare::modified_at(key, claim.epoch));
  t.success.push_back(etcd_op::erase(key));
  t.failure.push_back(etcd_op::get(key));
  etcd_.txn(t, [cluster = cluster_, claim, done = std::move(done)](result<etcd_txn_result> r) {
    const std::string name = to_string(claim.shard);
    if (!r) return done(r.error().with_context(fmt::format("node {} releasing shard {}", claim.node, name)));
    if (r->succeeded) return done(status());
    if (r->ranges.empty() || r->ranges[0].kvs.empty())
      return done(status(errc::not_found, fmt::format("shard {} was no longer held when node {} released it (epoch {}): "
                                                      "its lease ended", name, claim.node, claim.epoch)));
    auto held = decode_claim(r->ranges[0].kvs[0], cluster);
    std::string now = held ? fmt::format("node {} at epoch {}", held->node, held->epoch) : std::string("another holder");
    done(status(errc::locked, fmt::format("shard {} is no longer node {}'s at epoch {}: {} holds it (fenced)", name,
                                          claim.node, claim.epoch, now)));
  });
}

void shard_claims::current(const shard_id& shard, etcd_client::done<std::optional<shard_claim>> done) const {
  etcd_.range(owner_key(cluster_, shard.agent, shard.index),
              [cluster = cluster_, done = std::move(done)](result<etcd_range_result> r) {
                if (!r) return done(r.error());
                if (r->kvs.empty()) return done(std::optional<shard_claim>());
                auto c = decode_claim(r->kvs[0], cluster);
                if (!c) return done(c.error());
                done(std::optional<shard_claim>(std::move(*c)));
              });
}

void shard_claims::list(etcd_client::done<std::vector<shard_claim>> done) const {
  etcd_.range_prefix(owners_prefix(cluster_), [cluster = cluster_, done = std::move(done)](result<etcd_range_result> r) {
    if (!r) return done(r.error());
    std::vector<shard_claim> out;
    for (const auto& kv : r->kvs) {
      auto c = decode_claim(kv, cluster);
      if (!c) return done(c.error());
      out.push_back(std::move(*c));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.shard < b.shard; });
    done(std::move(out));
  });
}

}  // namespace sessionrt::cluster
