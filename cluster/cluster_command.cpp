#include "cluster/cluster_command.hpp"

#include <memory>
#include <ostream>

#include "cluster/cluster_status.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/offline_stores.hpp"

namespace sessionrt::cluster {
namespace {

struct status_options {
  std::string cluster;
  std::string etcd;
  bool json = false;
  std::int64_t timeout_ms = 5000;
};

void status_command(const status_options& o, runtime::cli_state& st) {
  std::string endpoint = o.etcd;
  if (endpoint.empty() && st.io.env) endpoint = st.io.env("SESSIONRT_ETCD").value_or("");
  if (endpoint.empty()) endpoint = "http://127.0.0.1:2379";
  auto etcd = blocking_etcd::connect({endpoint, o.timeout_ms});
  if (!etcd) return runtime::fail(st, etcd.error());
  auto snap = read_cluster_snapshot(*etcd, o.cluster);
  if (!snap) return runtime::fail(st, snap.error().with_context("cluster status"));
  if (o.json) *st.io.out << json::to_pretty(status_json(*snap)) << "\n";
  else *st.io.out << status_text(*snap);
  st.exit_code = 0;
}

}  // namespace

void add_cluster_commands(CLI::App& app, runtime::cli_state& st) {
  auto* group = app.add_subcommand("cluster", std::string("Sessions over several nodes on etcd (issue #36). ") +
                                                  runtime::reads_no_settings);
  group->require_subcommand(1);
  auto o = std::make_shared<status_options>();
  auto* status = group->add_subcommand("status", "Nodes, shards per node, owner epochs and handoffs of a cluster, "
                                                 "read from etcd (writes nothing)");
  status->add_option("--cluster", o->cluster, "Cluster name")->required();
  status->add_option("--etcd", o->etcd, "etcd endpoint (default $SESSIONRT_ETCD, else http://127.0.0.1:2379)");
  status->add_flag("--json", o->json, "Print JSON ({\"nodes\": [...], ...})");
  status->add_option("--timeout-ms", o->timeout_ms, "How long to wait for etcd per request")
      ->check(CLI::Range(1, 600000));
  status->callback([o, &st] { status_command(*o, st); });
}

}  // namespace sessionrt::cluster
