// The command groups of the libraries above the runtime that the `sessionrt` executable
// registers after the application's own: the gateway daemon, the remote commands (send,
// compact, tail, and the live-gateway path of sessions / status), simulate, cluster. One list,
// so that the in-process CLI tests (tests/cli/cli_run.hpp) run the same command line as the
// binary. The caller links sessionrt_gateway, sessionrt_sim and sessionrt_cluster.
#pragma once
#include <vector>

#include "cluster/cluster_command.hpp"
#include "gateway/gateway_command.hpp"
#include "gateway/remote_commands.hpp"
#include "runtime/cli/cli.hpp"
#include "sim/simulate_command.hpp"

namespace sessionrt::app {

inline const std::vector<runtime::command_adder>& command_groups() {
  static const std::vector<runtime::command_adder> groups = {gateway::add_gateway_command, gateway::add_remote_commands,
                                                             sim::add_simulate_command, cluster::add_cluster_commands};
  return groups;
}

}  // namespace sessionrt::app
