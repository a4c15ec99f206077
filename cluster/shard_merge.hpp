// shard_merge: a cluster state dir's shards (shard_layout.hpp) back into the plain single-node
// OpenClaw layout, for tools and for a return to one node (`sessionrt store merge`):
//   <out>/agents/<agent>/sessions/sessions.json   every shard's rows of that agent, shards in index
//                                                 order, rows in their file's order
//   <out>/agents/<agent>/sessions/<files>         every shard's transcripts, archives and other
//                                                 files of its sessions dir, copied (fsync'd) or,
//                                                 with `link`, hard-linked (copied when the
//                                                 filesystem refuses the link)
// A row's sessionFile that names its shard's sessions dir is rewritten to name <out>'s.
//
// Contract:
//   - Read-only on the cluster dir: nothing in a shard is written, repaired or replayed. A
//     shard whose commit log holds records (its owner runs, or died before a checkpoint; its
//     sessions.json may lack rows the log has) is refused with its name: stop the nodes, or let
//     a node open the shard, and merge again. A sessions.json that does not parse is refused
//     too (a node's open sets it aside and rebuilds it). Stores are normalized on load as
//     anywhere else (storage::load_from_text).
//   - A key present in two shards (a bug or a hand copy: shard_of gives one shard) is kept
//     once: the row with the newest updatedAt (the first shard's on a tie), at the first
//     shard's place, and each such key is listed in the report.
//   - Two shards with a file of the same name (not a row's transcript: session ids are uuids)
//     keep both: the later one is written as "<name>.conflict-<agent>-<nnn>" and listed.
//   - Files left out: each shard's sessions.json* (its corrupt copies and temp files) and
//     *.lock / *.tmp files; counted in the report's warnings.
//   - Crash safety: everything is written into "<out>.merging" (0700) with a marker naming the
//     cluster dir, made durable (files and directories fsync'd), and only then renamed to
//     <out> (the parent fsync'd). A merge killed at any point leaves <out> as it was (absent,
//     empty, or with --force the old one) or complete, never partial. A rerun finds
//     "<out>.merging" with its marker and finishes the job into it (every file written again);
//     a "<out>.merging" that is not a merge of the same cluster dir is refused.
//   - <out> must be absent or an empty directory; with `force` a non-empty one is first moved
//     aside to "<out>.replaced-<ms>" (named in the report; nothing is deleted).
//   - progress() is called after each shard.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cluster/shard_id.hpp"
#include "messages/clock.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"

namespace sessionrt::cluster {

struct merge_progress {
  std::size_t shards_done = 0, shards_total = 0;
  std::size_t rows = 0, files = 0;
  std::uint64_t bytes = 0;
};

struct merge_options {
  bool force = false;
  bool link = false;
  std::function<void(const merge_progress&)> progress;
};

struct duplicate_row {
  std::string key;
  shard_id kept, dropped;
  std::optional<std::int64_t> kept_updated_at, dropped_updated_at;
};

struct merge_report {
  std::string out_dir;
  std::size_t shards = 0;
  std::vector<std::string> agents;
  std::size_t rows = 0;   // rows written (duplicates once)
  std::size_t files = 0;  // files copied or linked
  std::size_t linked = 0;
  std::uint64_t bytes = 0;
  std::vector<duplicate_row> duplicates;
  std::vector<std::string> conflicts;  // files written under a .conflict- name
  std::vector<std::string> warnings;   // names skipped under shards/, files left out
  std::optional<std::string> replaced;  // where --force moved the old <out>
  bool resumed = false;                 // an interrupted merge's "<out>.merging" was finished
};

std::string merge_staging_dir(const std::string& out_dir);  // "<out>.merging"

result<merge_report> merge_shards(storage::fs& fs, clock& wall, const std::string& cluster_dir,
                                  const std::string& out_dir, const merge_options& options = {});

}  // namespace sessionrt::cluster
