// shard_split: a single node's state dir into a cluster's shard layout (shard_layout.hpp), for
// a move from one node to a cluster (`sessionrt store split`); the reverse of shard_merge:
//   <out>/shards/<agent>/<nnn>/agents/<agent>/sessions/sessions.json   the agent's rows whose key
//                                                  is in shard nnn (shard_of), in file order
//   <out>/shards/<agent>/<nnn>/agents/<agent>/sessions/<files>         their sessions' files
// A row's sessionFile in the agent's sessions dir is rewritten to name its shard's (under <out>
// as given, made absolute).
//
// Contract:
//   - Read-only on the state dir. Refused before anything is written: a commit log there holding
//     records not replayed yet (a runtime runs, or stopped before a checkpoint: sessions.json may
//     lack rows), a sessions.json that does not parse, an <out> that exists (anything at that
//     path), or a "<out>.splitting" left by a split that was killed (remove it and split again).
//     The caller refuses a state dir whose store a running runtime holds (the CLI does).
//   - Files (copied, fsync'd): each file of an agent's sessions dir goes to the shard of the row
//     whose session it is: the file the row's sessionFile names, and every file whose name holds
//     the row's sessionId (its archives, topics, compressed or dropped tails). A file of no row
//     (archives of removed rows, a reset's old transcript, orphans) goes to shard 000 of the
//     agent, so nothing is lost (a merge brings it back; shard 000's maintenance treats it as a
//     single node's would). Left out: sessions.json* (its corrupt copies, temps), *.lock, *.tmp,
//     and what is not a regular file; counted in the report's warnings.
//   - Crash safety: everything is written into "<out>.splitting", made durable, then renamed to
//     <out>: a split killed at any point leaves <out> absent or complete.
//   - No epoch stamp is written: the first node to open a shard stamps it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/shard_id.hpp"
#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::cluster {

struct split_options {
  int shards_per_agent = default_shards_per_agent;
};

struct split_report {
  std::string out_dir;
  std::vector<std::string> agents;
  std::size_t shards = 0;    // shard dirs written
  std::size_t rows = 0;
  std::size_t files = 0;     // files copied
  std::size_t unplaced = 0;  // of them, files of no row (in shard 000)
  std::uint64_t bytes = 0;
  std::vector<std::string> warnings;
};

std::string split_staging_dir(const std::string& out_dir);  // "<out>.splitting"

result<split_report> split_state_dir(storage::fs& fs, clock& wall, const std::string& state_dir,
                                     const std::string& out_dir, const split_options& options = {});

}  // namespace sessionrt::cluster
