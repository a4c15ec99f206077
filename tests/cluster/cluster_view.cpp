#include "tests/cluster/cluster_view.hpp"

#include <boost/json.hpp>

#include "cluster/cluster_keys.hpp"
#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_table_store.hpp"
#include "gateway/forward_rule.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::testing {

using namespace cluster;

std::string cluster_view::holder(int shard) const {
  for (const auto& c : claims)
    if (c.shard.index == shard) return c.node;
  return "";
}

std::optional<cluster_view> read_cluster_view(const blocking_etcd& etcd, const std::string& name, int shards) {
  auto nodes = await_call<result<std::vector<node_record>>>(
      [&](etcd_client::done<std::vector<node_record>> cb) { list_nodes(etcd.async(), name, std::move(cb)); });
  auto table = await_call<result<shard_table>>([&](etcd_client::done<shard_table> cb) {
    shard_table_store(etcd.async(), name).read("main", shards, std::move(cb));
  });
  auto claims = await_call<result<std::vector<shard_claim>>>(
      [&](etcd_client::done<std::vector<shard_claim>> cb) { shard_claims(etcd.async(), name).list(std::move(cb)); });
  auto leader = etcd.range(leader_key(name));
  if (!nodes || !table || !claims || !leader) return std::nullopt;
  cluster_view v;
  for (const auto& n : *nodes) {
    v.members.insert(n.id);
    v.address[n.id] = n.address;
    v.lease[n.id] = n.lease;
    v.any_draining = v.any_draining || n.draining;
  }
  v.table = std::move(*table);
  v.claims = std::move(*claims);
  if (!leader->kvs.empty()) {
    std::error_code ec;
    auto j = boost::json::parse(leader->kvs[0].value, ec);
    if (!ec && j.is_object()) v.leader = std::string(json::get_string(j.get_object(), "node").value_or(""));
  }
  return v;
}

bool settled_on(const cluster_view& v, const std::set<std::string>& ids, int shards) {
  if (v.members != ids || v.any_draining || v.table.shards() != shards || v.claims.size() != std::size_t(shards))
    return false;
  std::map<std::string, int> count;
  for (const auto& o : v.table.owners) {
    if (!ids.count(o)) return false;
    ++count[o];
  }
  const int n = static_cast<int>(ids.size()), lo = shards / n, hi = lo + (shards % n ? 1 : 0);
  for (const auto& id : ids)
    if (count[id] < lo || count[id] > hi) return false;
  for (const auto& c : v.claims)
    if (c.node != v.table.owners[std::size_t(c.shard.index)] || c.lease != v.lease.at(c.node)) return false;
  return true;
}

bool all_held_by(const cluster_view& v, const std::set<std::string>& ids, int shards) {
  if (v.claims.size() != std::size_t(shards)) return false;
  for (const auto& c : v.claims)
    if (!ids.count(c.node) || !v.lease.count(c.node) || c.lease != v.lease.at(c.node)) return false;
  return true;
}

result<std::unique_ptr<gateway::gateway_client>> client_at(const std::string& address, const std::string& token,
                                                           std::vector<std::string> scopes) {
  auto where = gateway::parse_address(address);
  if (!where) return status(errc::invalid_argument, "a node's address does not parse: " + address);
  gateway::gateway_client_options o;
  o.host = where->host;
  o.port = where->port;
  o.identity.token = token;
  o.identity.scopes = std::move(scopes);
  return gateway::gateway_client::connect(o);
}

}  // namespace sessionrt::testing
