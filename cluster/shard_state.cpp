#include "cluster/shard_state.hpp"

#include <fmt/format.h>

#include "cluster/shard_epoch_file.hpp"
#include "cluster/shard_layout.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::cluster {
namespace {

// Step 2: the epoch recorded now is E, or the fenced error. Writes only the stamp.
status stamp_through_fence(storage::fs& fs, const std::string& dir, const epoch_fence& fence, shard_open_report& rep) {
  const std::string path = shard_epoch_path(dir);
  auto durable = read_shard_epoch(fs, path);
  if (!durable.ok()) return durable.error();
  rep.previous_epoch = *durable;
  rep.decision = fence.on_open(*durable);
  if (rep.decision == open_decision::fenced) return fence.fenced(**durable);
  if (rep.decision == open_decision::write) return {};
  SRT_RETURN_IF_ERROR(stamp_shard_epoch(fs, path, fence.epoch(), fence.node()));
  // Read back: a newer owner that stamped between our read and our rename wins.
  auto after = read_shard_epoch(fs, path);
  if (!after.ok()) return after.error();
  if (!*after)
    return {errc::locked, fmt::format("{} vanished right after node {} stamped epoch {}: another process is at work "
                                      "on shard {}; refusing to write", path, fence.node(), fence.epoch(),
                                      to_string(fence.shard()))};
  if (**after != fence.epoch()) return fence.fenced(**after);
  return {};
}

// Step 3, as runtime.cpp's start-up does it for one agent's store.
status recover(storage::fs& fs, clock& wall, opened_shard& out, const shard_open_options& options) {
  SRT_RETURN_IF_ERROR(storage::ensure_dir(fs, out.sessions_dir));
  auto log = runtime::open_commit_log(fs, out.dir);
  if (!log.ok()) return log.error();
  out.log = std::move(*log);
  auto path = storage::store_path(out.dir, out.shard.agent);
  if (!path.ok()) return path.error();
  out.store = std::make_shared<storage::session_store_file>(fs, wall, *path, options.store);
  auto loaded = out.store->load();
  if (!loaded.ok()) return loaded.error();
  out.report.store = std::move(*loaded);
  if (const auto& q = out.report.store.quarantine)
    out.report.warnings.push_back(fmt::format("{} was unreadable ({}); moved to {}; {} row(s) rebuilt from transcript "
                                              "headers, {} key(s) lost", *path, q->cause, q->quarantined_path,
                                              q->rows_from_headers.size(), q->unrecoverable_keys.size()));
  if (auto it = out.log.recovered.report.rows.find(*path); it != out.log.recovered.report.rows.end())
    out.report.logged_rows = it->second.size();
  const bool replayed = runtime::apply_logged_rows(out.log, *out.store);
  auto rec = storage::reconcile_store(fs, out.store->store(), out.sessions_dir);
  if (!rec.ok()) return rec.error().with_context("reconciling " + *path + " with its transcripts");
  out.report.adopted = std::move(rec->adopted);
  if (replayed || !out.report.adopted.empty()) SRT_RETURN_IF_ERROR(out.store->save());
  SRT_RETURN_IF_ERROR(runtime::finish_commit_log(fs, wall, out.dir, out.log, options.batch_log));
  for (const auto& w : out.log.recovered.report.warnings) out.report.warnings.push_back("commit log replay: " + w);
  return {};
}

// Before step 3 (shard_state.hpp): an earlier owner's transcript locks go.
status remove_earlier_locks(storage::fs& fs, opened_shard& out) {
  auto names = fs.list_dir(out.sessions_dir);
  if (!names.ok()) return names.error().code() == errc::not_found ? status() : names.error();
  for (const auto& name : *names) {
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".lock") != 0) continue;
    const std::string path = storage::path_join(out.sessions_dir, name);
    if (auto st = fs.unlink(path); !st.ok() && st.code() != errc::not_found)
      return st.with_context("removing an earlier owner's transcript lock");
    out.report.locks_removed.push_back(path);
  }
  return {};
}

// Step 4.
void repair_tails(storage::fs& fs, clock& wall, opened_shard& out) {
  for (const auto& row : out.store->store()) {
    const auto id = row.entry.session_id();
    if (!id) continue;
    const std::string path = storage::row_transcript_path(fs, out.sessions_dir, *id, row.entry.session_file());
    if (path.empty()) continue;
    auto tail = storage::check_transcript_tail(fs, path);
    if (!tail.ok()) {
      if (tail.error().code() != errc::not_found) out.report.warnings.push_back(tail.error().message());
      continue;
    }
    ++out.report.tails_checked;
    if (tail->clean()) continue;
    auto rep = storage::repair_transcript_file(fs, wall, path);
    if (!rep.ok()) {
      out.report.warnings.push_back(rep.error().with_context("repairing the torn tail of " + path).message());
      continue;
    }
    if (rep->changed()) out.report.repaired.push_back(std::move(*rep));
  }
}

}  // namespace

result<opened_shard> open_shard_state(storage::fs& fs, clock& wall, const std::string& cluster_dir,
                                      const epoch_fence& fence, const write_permit& permit,
                                      const shard_open_options& options) {
  opened_shard out;
  out.shard = fence.shard();
  auto dir = shard_dir(cluster_dir, out.shard);
  if (!dir.ok()) return dir.error();
  out.dir = *dir;
  auto sessions = storage::agent_sessions_dir(out.dir, out.shard.agent);
  if (!sessions.ok()) return sessions.error();
  out.sessions_dir = *sessions;
  const std::string what = fmt::format("opening shard {} at epoch {}", to_string(out.shard), fence.epoch());
  if (auto st = permit.check(); !st.ok()) return st.with_context(what);
  SRT_RETURN_IF_ERROR(storage::ensure_dir(fs, out.dir).with_context(what));
  SRT_RETURN_IF_ERROR(stamp_through_fence(fs, out.dir, fence, out.report));
  auto stamp = fs.lstat(shard_epoch_path(out.dir));
  if (!stamp.ok()) return stamp.error().with_context(what);
  out.guard = std::make_shared<shard_write_guard>(fs, out.dir, fence, permit, *stamp);
  // The permit may have run out during the reads: recovery writes, so ask the guard first.
  SRT_RETURN_IF_ERROR(out.guard->check().with_context(what));
  // From here on every write goes through the guard, recovery's too (guarded_fs.hpp).
  out.files = std::make_shared<guarded_fs>(fs, out.guard);
  SRT_RETURN_IF_ERROR(remove_earlier_locks(*out.files, out).with_context(what));
  SRT_RETURN_IF_ERROR(recover(*out.files, wall, out, options).with_context(what));
  if (options.repair_tails) repair_tails(*out.files, wall, out);
  return out;
}

}  // namespace sessionrt::cluster
