#include "runtime/commit_log_setup.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "storage/durable_file.hpp"

namespace sessionrt::runtime {

result<commit_log_setup> open_commit_log(storage::fs& f, const std::string& state_dir) {
  namespace cl = storage::commit_log;
  commit_log_setup out;
  auto rec = cl::replay_state_dir(f, state_dir);
  if (!rec.ok()) return rec.error().with_context("replaying the commit log in " + cl::log_dir(state_dir));
  out.recovered = std::move(*rec);
  const auto& rep = out.recovered.report;
  for (const auto& w : rep.warnings) spdlog::warn("commit log replay: {}", w);
  if (rep.rewritten > 0)
    spdlog::warn("commit log replay: {} record(s) written again into {} transcript(s) ({} bytes) after a crash",
                 rep.rewritten, rep.rewritten_paths.size(), rep.bytes_rewritten);
  return out;
}

bool apply_logged_rows(commit_log_setup& setup, storage::session_store_file& file) {
  const auto& rows = setup.recovered.report.rows;
  auto it = rows.find(file.path());
  if (it == rows.end()) return false;
  setup.rows_applied.insert(file.path());
  auto done = storage::commit_log::apply_row_changes(file.store(), it->second);
  for (const auto& r : done.refused) spdlog::warn("commit log replay: {}: row not replayed: {}", file.path(), r);
  spdlog::info("commit log replay: {}: {} row(s) written again, {} removed after a crash", file.path(), done.put,
               done.removed);
  return done.put + done.removed > 0;
}

status finish_commit_log(storage::fs& f, clock& c, const std::string& state_dir, commit_log_setup& setup, bool batch) {
  namespace cl = storage::commit_log;
  std::vector<std::string> warnings;
  SRT_RETURN_IF_ERROR(cl::finish_recovery(f, c, state_dir, setup.recovered, setup.rows_applied, &warnings)
                          .with_context("finishing the commit log's replay in " + cl::log_dir(state_dir)));
  for (const auto& w : warnings) spdlog::warn("commit log replay: {}", w);
  if (!batch) return {};
  auto made = cl::create_log(f, c, cl::log_dir(state_dir), setup.recovered.next_number, setup.recovered.state_id);
  if (!made.ok()) return made.error();
  setup.log = std::move(*made);
  return {};
}

}  // namespace sessionrt::runtime
