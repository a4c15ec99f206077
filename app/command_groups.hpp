// The command groups of the libraries above the runtime that the `sessionrt` executable
// registers after the application's own: the gateway daemon (with its cluster node,
// app/gateway_cluster.hpp), the remote commands (send,
// compact, tail, and the live-gateway path of sessions / status), simulate, cluster. One list,
// so that the in-process CLI tests (tests/cli/cli_run.hpp) run the same command line as the
// binary. The caller links sessionrt_app_groups, sessionrt_gateway, sessionrt_sim and sessionrt_cluster.
#pragma once
#include <vector>

#include "app/gateway_cluster.hpp"
#include "cluster/cluster_command.hpp"
#include "cluster/shard_store_commands.hpp"  // `store merge`, added to the application's `store` group
#include "gateway/gateway_command.hpp"
#include "gateway/remote_commands.hpp"
#include "runtime/cli/cli.hpp"
#include "sim/simulate_command.hpp"

namespace sessionrt::app {

inline const std::vector<runtime::command_adder>& command_groups() {
  static const std::vector<runtime::command_adder> groups = {add_gateway_with_cluster, gateway::add_remote_commands,
                                                             sim::add_simulate_command, cluster::add_cluster_commands,
                                                             cluster::add_store_shard_commands};
  return groups;
}

}  // namespace sessionrt::app
