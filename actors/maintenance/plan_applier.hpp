// plan_applier: the offline side of store maintenance (the CLI, tests, benchmarks): list a
// sessions dir for the planner, find the empty transcripts --fix-missing asks about, and apply
// a maintenance_plan to the files. Every syscall goes through storage::fs. The caller owns
// the exclusion: nothing else may write the store or the dir while this runs (the CLI holds
// the store's write lock; the runtime's maintenance actor applies plans itself, through the
// store writer).
// - scan_sessions_dir: the regular files directly in `dir` (list_dir + lstat, symlinks and
//   directories left out), in name order. Errors: the dir cannot be listed, or a name cannot be
//   stat'ed (the message names the file); a name that vanished between list and stat is left
//   out.
// - find_empty_transcripts: of the rows' transcripts in the listing, the ones of at most 4096
//   bytes without a message record ([R§5.5] --fix-missing). A file that cannot be read is an
//   error naming it.
// - apply_plan_range: actions [begin, end) of a plan made in enforce mode, in the plan's
//   order: first its row removals and rows archived in place (a row whose updatedAt changed
//   since the plan, or that is gone, or is archived already, is skipped), one store save, then
//   its file actions (a compress_file is not this applier's: the runtime's maintenance actor
//   applies the cold storage plan). A file action is skipped (and
//   noted) when a row of the store still references its session, the file is gone or its size
//   or mtime changed, or an archive's target name is taken. It stops at the first error: the
//   report says what was applied before it (the saved rows stay removed; a file left behind is
//   unreferenced and a later plan takes it). Applying a warn plan is invalid_argument.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "actors/maintenance/maintenance_planner.hpp"
#include "messages/status.hpp"
#include "storage/fs.hpp"
#include "storage/session_store_file.hpp"

namespace sessionrt::actors {

// Called now and then with (items done, items in all) while a long scan or apply runs.
using progress_fn = std::function<void(std::size_t done, std::size_t total)>;

result<std::vector<dir_file>> scan_sessions_dir(storage::fs& files, const std::string& dir,
                                                const progress_fn& progress = {});

inline constexpr std::uint64_t empty_transcript_max_bytes = 4096;
result<std::unordered_set<std::string>> find_empty_transcripts(storage::fs& files, const std::string& dir,
                                                               const std::vector<maintenance_row>& rows,
                                                               const std::vector<dir_file>& listing);

struct apply_report {
  std::vector<plan_action> applied;  // in order
  std::vector<std::string> skipped;  // one sentence per skipped action
  std::size_t next = 0;              // the first action not yet looked at
  status error;                      // the error that stopped it, if any
};

// One file action of an enforce plan (no row check: the caller made sure no row references
// its session, or, for a compress_file, holds the transcript's write lock). True when done; false with `skipped` set when the file is gone, changed since
// the plan (size, mtime, not regular) or the archive name is taken; an error otherwise.
result<bool> apply_file_action(storage::fs& files, const std::string& sessions_dir, const plan_action& a,
                               std::string& skipped);

apply_report apply_plan_range(storage::fs& files, storage::session_store_file& store, const std::string& sessions_dir,
                              const maintenance_plan& plan, std::size_t begin, std::size_t end);

// The whole plan in batches of `batch_actions` (one store save per batch), reporting progress
// after each batch.
apply_report apply_plan(storage::fs& files, storage::session_store_file& store, const std::string& sessions_dir,
                        const maintenance_plan& plan, std::size_t batch_actions = 50000,
                        const progress_fn& progress = {});

}  // namespace sessionrt::actors
