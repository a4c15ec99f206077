#include "cluster/cluster_nodes.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>

#include "cluster/cluster_keys.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"

namespace sessionrt::cluster {

result<node_record> decode_node_record(const etcd_kv& kv, const std::string& cluster) {
  node_record r;
  r.id = std::string(name_under(kv.key, nodes_prefix(cluster)));
  if (r.id.empty() || !check_name("node id", r.id).ok())
    return status(errc::corrupt, fmt::format("{} is not a node key of cluster {}", kv.key, cluster));
  auto o = json::parse_object(kv.value, {64u << 10, 8});
  if (!o) return status(errc::corrupt, fmt::format("node record {}: {}", kv.key, o.error().message()));
  r.address = std::string(json::get_string(*o, "address").value_or(""));
  r.build = std::string(json::get_string(*o, "build").value_or(""));
  r.draining = json::get_bool(*o, "draining").value_or(false);
  r.lease = kv.lease;
  return r;
}

std::vector<node_view> node_views(const std::vector<node_record>& nodes) {
  std::vector<node_view> out;
  for (const auto& n : nodes) out.push_back({n.id, n.draining});
  return out;
}

void list_nodes(const etcd_client& etcd, const std::string& cluster, etcd_client::done<std::vector<node_record>> done) {
  etcd.range_prefix(nodes_prefix(cluster), [cluster, done = std::move(done)](result<etcd_range_result> r) {
    if (!r) return done(r.error());
    std::vector<node_record> out;
    for (const auto& kv : r->kvs) {
      auto rec = decode_node_record(kv, cluster);
      if (!rec) return done(rec.error());
      out.push_back(std::move(*rec));
    }
    done(std::move(out));
  });
}

}  // namespace sessionrt::cluster
