#include "cluster/cluster_command.hpp"
#include "gateway/gateway_command.hpp"
#include "gateway/remote_commands.hpp"
#include "runtime/cli/cli.hpp"
#include "sim/simulate_command.hpp"

int main(int argc, char** argv) {
  using namespace sessionrt;
  return runtime::run_cli(argc, argv, runtime::process_cli_io(),
                          {gateway::add_gateway_command, gateway::add_remote_commands, sim::add_simulate_command,
                           cluster::add_cluster_commands});
}
