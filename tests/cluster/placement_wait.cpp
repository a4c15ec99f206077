#include "tests/cluster/placement_wait.hpp"

#include <fmt/format.h>

#include <thread>
#include <vector>

#include "cluster/cluster_nodes.hpp"
#include "cluster/shard_claims.hpp"
#include "cluster/shard_id.hpp"
#include "tests/cluster/cluster_view.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

using namespace cluster;

std::optional<placement_view> wait_placement(const blocking_etcd& etcd, const std::string& cluster,
                                             const std::map<std::string, int>& expect, std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    auto nodes = await_call<result<std::vector<node_record>>>(
        [&](etcd_client::done<std::vector<node_record>> cb) { list_nodes(etcd.async(), cluster, std::move(cb)); });
    auto claims = await_call<result<std::vector<shard_claim>>>(
        [&](etcd_client::done<std::vector<shard_claim>> cb) { shard_claims(etcd.async(), cluster).list(std::move(cb)); });
    if (nodes && claims && nodes->size() == expect.size() && claims->size() == std::size_t(default_shards_per_agent)) {
      placement_view v;
      for (const auto& n : *nodes) v.address[n.id] = n.address;
      std::map<std::string, int> per;
      for (const auto& c : *claims) {
        v.holder[c.shard.index] = c.node;
        ++per[c.node];
      }
      bool ok = per.size() == expect.size();
      for (const auto& [node, want] : expect) ok = ok && per.count(node) && (want == 0 || per.at(node) == want);
      if (ok) return v;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

std::string key_held_by(const placement_view& v, const std::string& node, const std::string& stem) {
  for (int i = 0;; ++i) {
    const std::string key = fmt::format("agent:main:{}-{}", stem, i);
    if (v.holder.at(shard_of(key).index) == node) return key;
  }
}

result<std::unique_ptr<gateway::gateway_client>> admin_client(const placement_view& v, const std::string& node,
                                                              const std::string& token) {
  return client_at(v.address.at(node), token, {"operator.admin"});
}

}  // namespace sessionrt::testing
