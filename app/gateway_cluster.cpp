#include "app/gateway_cluster.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>

#include "cluster/cluster_node.hpp"
#include "cluster/monotonic_alarms.hpp"
#include "cluster/monotonic_clock.hpp"
#include "cluster/owner_directory.hpp"
#include "cluster/owner_refresh.hpp"
#include "cluster/shard_host.hpp"
#include "gateway/gateway_command.hpp"
#include "gateway/gateway_server.hpp"
#include "runtime/cli/version.hpp"
#include "runtime/providers/http_loop.hpp"
#include "storage/system_clock.hpp"

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
  // The shards this node serves (after the node in destruction: the node's hooks call it; and
  // it outlives the runtime's stop, which writes the shards through their files).
  std::unique_ptr<cluster::shard_host> host;
  std::unique_ptr<cluster::cluster_node> node;
  // Who owns each session's shard, for forwarding (gateway/shard_forward.hpp): shared with the
  // server's forwarder, which may outlive this record.
  std::shared_ptr<cluster::owner_directory> owners;
  std::unique_ptr<cluster::owner_refresh> refresh;
  ~running_node() {
    refresh.reset();
    node.reset();
  }
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

gateway::shard_route route_of(const cluster::owner_answer& a) {
  gateway::shard_route r;
  r.shard = cluster::to_string(a.shard);
  r.node = a.node;
  r.address = a.address;
  r.why = a.why;
  r.at = a.at == cluster::owner_answer::where::local    ? gateway::shard_route::where::local
         : a.at == cluster::owner_answer::where::remote ? gateway::shard_route::where::remote
                                                        : gateway::shard_route::where::unknown;
  return r;
}

// Calls for sessions another node owns go there over its gateway (docs/cluster.md "Any node
// serves any client"); the owners are read from etcd at the node's tick rate.
void enable_forwarding(running_node& r, const cluster::etcd_client& etcd, const cluster_args& a, const std::string& id,
                       gateway::gateway_server& server) {
  r.owners = std::make_shared<cluster::owner_directory>(id);
  r.refresh = std::make_unique<cluster::owner_refresh>(etcd, a.cluster, *r.owners,
                                                       std::clamp<std::int64_t>(a.ttl_s * 1000 / 4, 100, 1000));
  if (status first = r.refresh->refresh_now(); !first.ok()) spdlog::warn("cluster: {}", first.message());
  r.refresh->start();
  gateway::forward_options fo;
  fo.node_id = id;
  fo.token = server.token();
  fo.owner_of = [owners = r.owners](const std::string& key) { return route_of(owners->owner_of(key)); };
  fo.members = [owners = r.owners] { return owners->members(); };
  auto& forward = server.enable_forwarding(std::move(fo));
  server.set_extra_metrics([n = r.node.get(), f = &forward] { return n->metrics_text() + f->metrics_text(); });
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
  h.publish = [rt = &server.rt()](lifecycle_event e) { rt->publish(std::move(e)); };
  // The node's shards are served by the runtime from <state dir>/shards (cluster/shard_host.hpp):
  // opened when taken, closed (turns finished, durable) before the key goes, sealed when lost.
  running_node* raw = r.get();
  h.acquired = [raw](const cluster::shard_claim& c) { return raw->host->acquired(c); };
  h.opening = [raw](const cluster::shard_claim& c) { raw->host->opening(c); };
  h.fenced = [raw](const cluster::shard_claim& c, const std::string& why) { raw->host->fenced(c.shard, why); };
  h.drain = [raw](const cluster::shard_id& s, std::function<void()> done) {
    (void)raw->host->released(s);
    done();
  };
  r->node = std::make_unique<cluster::cluster_node>(*etcd, std::move(o), std::move(h),
                                                    cluster::process_monotonic_clock(), *r->alarms);
  cluster::shard_host_options ho;
  ho.cluster_dir = server.rt().state_dir();
  ho.batch_log = server.rt().settings().storage.durability == storage::durability::batch;
  ho.close_deadline_ms = std::max<std::int64_t>(a.ttl_s * 1000 / 4, 500);
  r->host = std::make_unique<cluster::shard_host>(server.rt(), storage::posix_fs(), storage::real_clock(),
                                                  r->node->membership().permit(), ho);
  if (status joined = r->node->join(); !joined.ok())
    return joined.with_context("joining cluster " + a.cluster + " at " + endpoint);
  r->node->run();
  enable_forwarding(*r, *etcd, a, id, server);
  *st.io.out << "sessionrt gateway joined cluster " << a.cluster << " as node " << id << " (etcd " << endpoint
             << ")" << std::endl;
  return std::function<status()>([r, &server, ttl_ms = a.ttl_s * 1000]() {
    server.set_extra_metrics(nullptr);
    r->refresh->stop();
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
                    "join this cluster (etcd membership, a placement leader, shard owner keys; docs/cluster.md): "
                    "the gateway serves the sessions of the shards it holds, from <state dir>/shards, which every "
                    "node of the cluster shares");
    cmd->add_option("--etcd", a->etcd, "etcd endpoint of --cluster (default $SESSIONRT_ETCD, else http://127.0.0.1:2379)");
    cmd->add_option("--node-id", a->node_id, "this node's id in --cluster (default <hostname>-<port>)");
    cmd->add_option("--cluster-lease-ttl", a->ttl_s,
                    "seconds of the node's etcd lease (default 10): a crashed node's shards move after about this "
                    "long; writes stop at half of it without a renewal")
        ->check(CLI::Range(1, 3600));
  };
  ext.configure = [a](runtime::runtime_options& o) {
    // A node serves sessions per shard: nothing of the shared state dir is loaded at start.
    if (!a->cluster.empty()) o.shard_of = cluster::shard_index_fn(cluster::default_shards_per_agent);
    return status();
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
