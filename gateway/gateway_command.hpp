// `sessionrt gateway ...`: registered by the executable's main (the runtime's CLI cannot see
// this library, which sits above it).
#pragma once
#include <functional>

#include "runtime/cli/cli.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::gateway {

class gateway_server;

// What the executable runs beside a gateway, since this library cannot see the layers beside
// it (the cluster node of `gateway --cluster`, app/cli/gateway_cluster.cpp):
//   add_options(cmd)  more options on `gateway` and `gateway run`;
//   start(server)     runs once the server listens; an error stops the gateway (exit 2). The
//                     function it returns runs when a stop was requested (SIGTERM), before the
//                     server stops (the cluster's handoff); its error is reported (exit 1).
struct gateway_extension {
  std::function<void(CLI::App* cmd)> add_options;
  // configure(options)  changes the runtime's options before it starts (a cluster node serves
  //                     sessions per shard: runtime_options::shard_of); an error stops (exit 2).
  std::function<status(runtime::runtime_options& options)> configure;
  std::function<result<std::function<status()>>(gateway_server& server)> start;
};

void add_gateway_command(CLI::App& app, runtime::cli_state& st);
void add_gateway_command(CLI::App& app, runtime::cli_state& st, gateway_extension ext);

}
