// `sessionrt gateway --cluster NAME --etcd URL [--node-id ID] [--cluster-lease-ttl S]`: the
// gateway command (gateway/gateway_command.hpp) with a cluster node beside it
// (cluster/cluster_node.hpp). The two libraries cannot see each other; the executable joins
// them here. Once the gateway listens, the node joins (its address is the gateway's
// bind:port), elects a placement leader, and claims the shards the tables give it; its
// figures join /metrics and its shard.* events go to the runtime's subscribers. The runtime
// serves sessions per shard (runtime_options::shard_of): a shard the node takes is opened from
// <state dir>/shards (cluster/shard_host.hpp), one it gives up is closed first, and a key of a
// shard it does not hold is refused with errc::not_owner. On SIGTERM the node hands its shards
// off and leaves before the gateway stops. Without --cluster the
// gateway runs alone, as before.
#pragma once
#include "runtime/cli/cli.hpp"

namespace sessionrt::app {

void add_gateway_with_cluster(CLI::App& app, runtime::cli_state& st);

}  // namespace sessionrt::app
