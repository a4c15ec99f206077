// cluster_command: the `sessionrt cluster` command group (issue #36), registered by the
// executable (app/command_groups.hpp) like the gateway's and the simulator's groups.
//   sessionrt cluster status --cluster NAME [--etcd URL] [--json] [--timeout-ms N]
// reads the cluster's nodes, shard tables and owner keys from etcd (cluster_status.hpp) and
// prints them; it writes nothing. --etcd defaults to $SESSIONRT_ETCD, else
// http://127.0.0.1:2379. Exit 0 when etcd answered, 2 on an error (etcd unreachable, a record
// that does not parse), with the error on stderr.
#pragma once
#include "runtime/cli/cli.hpp"

namespace sessionrt::cluster {

void add_cluster_commands(CLI::App& app, runtime::cli_state& st);

}  // namespace sessionrt::cluster
