#include "app/gateway_cluster.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <memory>

#include "cluster/cluster_node.hpp"
#include "cluster/monotonic_alarms.hpp"
#include "cluster/monotonic_clock.hpp"
#include "gateway/gateway_command.hpp"
#include "gateway/gateway_server.hpp"
#include "runtime/cli/version.hpp"
#include "runtime/providers/http_loop.hpp"

namespace sessionrt::app {
namespace {

struct cluster_args {
  std::string cluster, etcd, node_id;
  std::int64_t ttl_s = 10;
};

// What lives while the gateway runs, in destruction order: the node before its alarms and its
// HTTP loop.
struct running_node {
  std::unique_ptr<providers::http_loop> loop;
  std::unique_ptr<cluster::monotonic_alarms> alarms;
  std::unique_ptr<cluster::cluster_node> node;
  ~running_node() { node.reset(); }
};

// <hostname>-<port>, with what a node id may not hold replaced by '-'.
std::string default_node_id(int port) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "node");
  std::string id = std::string(host).substr(0, 50) + "-" + std::to_string(port);
  for (char& c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '-';
  return id;
}

std::vector<std::string> agents_of(const actors::runtime_settings& s) {
  std::vector<std::string> out;
  for (const auto& a : s.routing.agents) out.push_back(a.id);
  if (out.empty()) out.push_back("main");
  return out;
}

result<std::function<status()>> start_node(const cluster_args& a, const runtime::cli_state& st,
                                           gateway::gateway_server& server) {
  std::string endpoint = a.etcd;
  if (endpoint.empty() && st.io.env) endpoint = st.io.env("SESSIONRT_ETCD").value_or("");
  if (endpoint.empty()) endpoint = "http://127.0.0.1:2379";
  auto r = std::make_shared<running_node>();
  auto loop = providers::http_loop::start();
  if (!loop) return loop.error().with_context("starting the cluster node's HTTP loop");
  r->loop = std::move(*loop);
  auto etcd = cluster::etcd_client::make(*r->loop, {endpoint, std::max<std::int64_t>(a.ttl_s * 1000 / 3, 500)});
  if (!etcd) return etcd.error().with_context("--etcd");
  r->alarms = std::make_unique<cluster::monotonic_alarms>();

  cluster::cluster_node_options o;
  o.cluster = a.cluster;
  o.node_id = a.node_id.empty() ? default_node_id(server.port()) : a.node_id;
  const std::string id = o.node_id;
  o.address = server.bind() + ":" + std::to_string(server.port());
  o.build = runtime::version_string();
  o.ttl_s = a.ttl_s;
  o.agents = agents_of(server.rt().settings());
  cluster::cluster_node_hooks h;
  // Null drain: the session path does not route by shard yet, so nothing runs to drain.
  h.publish = [rt = &server.rt()](lifecycle_event e) { rt->publish(std::move(e)); };
  r->node = std::make_unique<cluster::cluster_node>(*etcd, std::move(o), std::move(h),
                                                    cluster::process_monotonic_clock(), *r->alarms);
  if (status joined = r->node->join(); !joined.ok())
    return joined.with_context("joining cluster " + a.cluster + " at " + endpoint);
  r->node->run();
  server.set_extra_metrics([n = r->node.get()] { return n->metrics_text(); });
  *st.io.out << "sessionrt gateway joined cluster " << a.cluster << " as node " << id << " (etcd " << endpoint
             << ")" << std::endl;
  return std::function<status()>([r, &server, ttl_ms = a.ttl_s * 1000]() {
    server.set_extra_metrics(nullptr);
    // A handoff within a TTL: past it the others would take the shards by failover anyway.
    status st = r->node->shutdown(ttl_ms);
    r->node.reset();
    return st;
  });
}

}  // namespace

void add_gateway_with_cluster(CLI::App& app, runtime::cli_state& st) {
  auto a = std::make_shared<cluster_args>();
  gateway::gateway_extension ext;
  ext.add_options = [a](CLI::App* cmd) {
    cmd->add_option("--cluster", a->cluster,
                    "join this cluster (etcd membership, a placement leader, shard owner keys; docs/cluster.md). "
                    "Sessions do not move between nodes yet: the gateway still serves its own state dir");
    cmd->add_option("--etcd", a->etcd, "etcd endpoint of --cluster (default $SESSIONRT_ETCD, else http://127.0.0.1:2379)");
    cmd->add_option("--node-id", a->node_id, "this node's id in --cluster (default <hostname>-<port>)");
    cmd->add_option("--cluster-lease-ttl", a->ttl_s,
                    "seconds of the node's etcd lease (default 10): a crashed node's shards move after about this "
                    "long; writes stop at half of it without a renewal")
        ->check(CLI::Range(1, 3600));
  };
  ext.start = [a, &st](gateway::gateway_server& server) -> result<std::function<status()>> {
    if (a->cluster.empty()) {
      if (!a->etcd.empty() || !a->node_id.empty())
        return status(errc::invalid_argument, "--etcd and --node-id need --cluster NAME");
      return std::function<status()>();
    }
    return start_node(*a, st, server);
  };
  gateway::add_gateway_command(app, st, std::move(ext));
}

}  // namespace sessionrt::app
