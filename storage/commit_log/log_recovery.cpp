#include "storage/commit_log/log_recovery.hpp"

#include <algorithm>

#include "storage/commit_log/log_files.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_store_file.hpp"
#include "storage/system_clock.hpp"

namespace sessionrt::storage::commit_log {

result<recovery> replay_state_dir(fs& f, const std::string& state_dir) {
  recovery out;
  auto id = state_identity(f, state_dir);
  if (!id.ok()) return id.error();
  out.state_id = *id;
  const std::string dir = log_dir(state_dir);
  SRT_RETURN_IF_ERROR(ensure_dir(f, dir));
  auto numbers = list_logs(f, dir);
  if (!numbers.ok()) return numbers.error().with_context("listing the commit logs");
  const auto kept = free_logs(f, dir);
  if (!kept.empty()) out.next_number = kept.back() + 1;
  if (numbers->empty()) return out;
  std::vector<std::string> paths;
  for (auto n : *numbers) paths.push_back(log_path(dir, n));
  auto rep = replay_logs(f, state_dir, out.state_id, paths);
  if (!rep.ok()) return rep.error();
  out.report = std::move(*rep);
  out.next_number = std::max(out.next_number, numbers->back() + 1);
  out.logs = std::move(*numbers);
  return out;
}

status finish_recovery(fs& f, clock& c, const std::string& state_dir, const recovery& rec,
                       const std::set<std::string>& applied, std::vector<std::string>* warnings) {
  for (const auto& [path, ops] : rec.report.rows) {
    if (applied.count(path)) continue;
    session_store_file file(f, c, path);
    auto loaded = file.load();
    if (!loaded.ok()) return loaded.error().with_context("applying the commit log's row changes to " + path);
    auto done = apply_row_changes(file.store(), ops);
    if (warnings)
      for (const auto& r : done.refused) warnings->push_back(path + ": row not replayed: " + r);
    SRT_RETURN_IF_ERROR(file.save().with_context("writing the commit log's row changes to " + path));
  }
  return remove_logs(f, log_dir(state_dir), rec.logs);
}

result<recovery> recover_logs(fs& f, const std::string& state_dir, clock* c) {
  auto rec = replay_state_dir(f, state_dir);
  if (!rec.ok()) return rec.error();
  SRT_RETURN_IF_ERROR(finish_recovery(f, c ? *c : real_clock(), state_dir, *rec, {}, &rec->report.warnings));
  return rec;
}

}  // namespace sessionrt::storage::commit_log
