// shard_store_commands: `sessionrt store merge`, added to the application's `store` group by the
// executable (app/command_groups.hpp) since the command needs the cluster's shard layout.
//   sessionrt store merge --cluster-dir DIR --out STATE_DIR [--force] [--link] [--json]
//   sessionrt store split --state-dir DIR --out CLUSTER_DIR [--shards N] [--json]
// split writes a single node's state dir as a cluster's shards (shard_split.hpp); refused while
// a runtime holds one of its stores, when CLUSTER_DIR exists, or its commit log is not replayed
// (exit 2).
// writes the plain single-node layout of every shard of DIR into STATE_DIR (shard_merge.hpp):
// one sessions.json per agent and the transcripts, durably; a progress line on stderr (when it
// is a terminal); a summary on stdout, each key found in two shards named. Exit 0 when merged
// (1 when keys were found in two shards, which should not happen), 2 when refused or failed
// (a non-empty STATE_DIR without --force, a shard whose commit log is not replayed, ...).
#pragma once
#include "runtime/cli/cli.hpp"

namespace sessionrt::cluster {

void add_store_shard_commands(CLI::App& app, runtime::cli_state& st);

}  // namespace sessionrt::cluster
