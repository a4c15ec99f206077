#include "cluster/cluster_status.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <set>

#include "cluster/cluster_keys.hpp"
#include "cluster/shard_table_store.hpp"

namespace sessionrt::cluster {
namespace bj = boost::json;

namespace {

struct node_figures {
  int assigned = 0;
  int held = 0;
  std::int64_t min_epoch = 0;
  std::int64_t max_epoch = 0;
};

struct agent_figures {
  int unassigned = 0;      // "" in the table
  int on_departed = 0;     // the table names a node that is no longer a member
};

struct figures {
  std::map<std::string, node_figures> nodes;
  std::map<std::string, agent_figures> agents;
  int total = 0, held = 0, handoffs = 0;
};

figures compute(const cluster_snapshot& s) {
  figures f;
  std::set<std::string> live;
  for (const auto& n : s.nodes) live.insert(n.id), f.nodes[n.id];
  std::map<shard_id, const shard_claim*> holder;
  for (const auto& c : s.claims) {
    holder[c.shard] = &c;
    auto& nf = f.nodes[c.node];  // a holder that is not listed still shows up
    ++nf.held;
    nf.min_epoch = nf.held == 1 ? c.epoch : std::min(nf.min_epoch, c.epoch);
    nf.max_epoch = std::max(nf.max_epoch, c.epoch);
  }
  f.held = static_cast<int>(s.claims.size());
  for (const auto& t : s.tables) {
    auto& af = f.agents[t.agent];
    for (int i = 0; i < t.shards(); ++i) {
      ++f.total;
      const std::string& owner = t.owners[static_cast<std::size_t>(i)];
      if (owner.empty()) {
        ++af.unassigned;
        continue;
      }
      if (!live.count(owner)) {
        ++af.on_departed;
        continue;
      }
      ++f.nodes[owner].assigned;
      auto h = holder.find(shard_id{t.agent, i});
      if (h != holder.end() && h->second->node != owner) ++f.handoffs;
    }
  }
  return f;
}

}  // namespace

result<cluster_snapshot> read_cluster_snapshot(const blocking_etcd& etcd, const std::string& cluster) {
  SRT_RETURN_IF_ERROR(check_name("cluster name", cluster));
  cluster_snapshot s;
  s.cluster = cluster;
  s.endpoint = etcd.endpoint();
  auto nodes = await_call<result<std::vector<node_record>>>(
      [&](etcd_client::done<std::vector<node_record>> cb) { list_nodes(etcd.async(), cluster, std::move(cb)); });
  if (!nodes) return nodes.error();
  s.nodes = std::move(*nodes);
  shard_table_store tables(etcd.async(), cluster);
  auto t = await_call<result<std::vector<shard_table>>>(
      [&](etcd_client::done<std::vector<shard_table>> cb) { tables.list(std::move(cb)); });
  if (!t) return t.error();
  s.tables = std::move(*t);
  shard_claims claims(etcd.async(), cluster);
  auto c = await_call<result<std::vector<shard_claim>>>(
      [&](etcd_client::done<std::vector<shard_claim>> cb) { claims.list(std::move(cb)); });
  if (!c) return c.error();
  s.claims = std::move(*c);
  for (const auto& n : s.nodes) {
    if (n.lease == 0) continue;
    auto ttl = etcd.lease_time_to_live(n.lease);
    if (!ttl) return ttl.error();
    s.lease_ttl_s[n.lease] = *ttl;
  }
  auto rev = etcd.range(cluster_prefix(cluster));  // a key nobody writes: the store's revision now
  if (!rev) return rev.error();
  s.revision = rev->revision;
  return s;
}

bj::object status_json(const cluster_snapshot& s) {
  const figures f = compute(s);
  bj::array nodes;
  for (const auto& n : s.nodes) {
    const auto& nf = f.nodes.at(n.id);
    auto ttl = s.lease_ttl_s.find(n.lease);
    bj::object o{{"id", n.id},
                 {"address", n.address},
                 {"build", n.build},
                 {"draining", n.draining},
                 {"lease", lease_hex(n.lease)},
                 {"leaseTtlS", ttl == s.lease_ttl_s.end() ? bj::value(nullptr) : bj::value(ttl->second)},
                 {"shardsAssigned", nf.assigned},
                 {"shardsHeld", nf.held}};
    o["epochs"] = nf.held == 0 ? bj::value(nullptr) : bj::value(bj::object{{"min", nf.min_epoch}, {"max", nf.max_epoch}});
    nodes.push_back(std::move(o));
  }
  bj::array agents;
  for (const auto& t : s.tables) {
    const auto& af = f.agents.at(t.agent);
    agents.push_back(bj::object{{"agent", t.agent},
                                {"shards", t.shards()},
                                {"tableRevision", t.revision},
                                {"unassigned", af.unassigned},
                                {"onDepartedNodes", af.on_departed}});
  }
  bj::array owners;
  for (const auto& c : s.claims)
    owners.push_back(bj::object{{"shard", to_string(c.shard)}, {"node", c.node}, {"epoch", c.epoch}});
  return bj::object{{"cluster", s.cluster},
                    {"etcd", s.endpoint},
                    {"revision", s.revision},
                    {"nodes", std::move(nodes)},
                    {"agents", std::move(agents)},
                    {"shards", bj::object{{"total", f.total}, {"held", f.held}}},
                    {"handoffsInFlight", f.handoffs},
                    {"owners", std::move(owners)}};
}

std::string status_text(const cluster_snapshot& s) {
  const figures f = compute(s);
  std::string out = fmt::format("cluster {} at {} (revision {})\n", s.cluster, s.endpoint, s.revision);
  if (s.nodes.empty()) out += "no live nodes\n";
  else out += fmt::format("nodes: {}\n", s.nodes.size());
  for (const auto& n : s.nodes) {
    const auto& nf = f.nodes.at(n.id);
    auto ttl = s.lease_ttl_s.find(n.lease);
    std::string lease = lease_hex(n.lease);
    if (ttl != s.lease_ttl_s.end()) lease += ttl->second < 0 ? " (expired)" : fmt::format(" ({} s left)", ttl->second);
    std::string epochs = nf.held == 0 ? std::string("-")
                         : nf.min_epoch == nf.max_epoch ? std::to_string(nf.min_epoch)
                                                        : fmt::format("{}..{}", nf.min_epoch, nf.max_epoch);
    out += fmt::format("  {}{}  address {}  build {}  lease {}  shards {} assigned, {} held  epochs {}\n", n.id,
                       n.draining ? " (draining)" : "", n.address.empty() ? "-" : n.address,
                       n.build.empty() ? "-" : n.build, lease, nf.assigned, nf.held, epochs);
  }
  if (s.tables.empty()) out += "no shard tables yet\n";
  else out += fmt::format("agents: {}\n", s.tables.size());
  for (const auto& t : s.tables) {
    const auto& af = f.agents.at(t.agent);
    out += fmt::format("  {}  {} shards  table revision {}  {} unassigned  {} on departed nodes\n", t.agent, t.shards(),
                       t.revision, af.unassigned, af.on_departed);
  }
  out += fmt::format("shards: {} in tables, {} held; handoffs in flight: {}\n", f.total, f.held, f.handoffs);
  return out;
}

}  // namespace sessionrt::cluster
