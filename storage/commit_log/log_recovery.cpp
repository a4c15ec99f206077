#include "storage/commit_log/log_recovery.hpp"

#include "storage/commit_log/log_files.hpp"
#include "storage/durable_file.hpp"

namespace sessionrt::storage::commit_log {

result<recovery> recover_logs(fs& f, const std::string& state_dir) {
  recovery out;
  auto id = state_identity(f, state_dir);
  if (!id.ok()) return id.error();
  out.state_id = *id;
  const std::string dir = log_dir(state_dir);
  SRT_RETURN_IF_ERROR(ensure_dir(f, dir));
  auto numbers = list_logs(f, dir);
  if (!numbers.ok()) return numbers.error().with_context("listing the commit logs");
  if (numbers->empty()) return out;
  std::vector<std::string> paths;
  for (auto n : *numbers) paths.push_back(log_path(dir, n));
  auto rep = replay_logs(f, state_dir, out.state_id, paths);
  if (!rep.ok()) return rep.error();
  out.report = std::move(*rep);
  out.next_number = numbers->back() + 1;
  SRT_RETURN_IF_ERROR(remove_logs(f, dir, *numbers));
  return out;
}

}  // namespace sessionrt::storage::commit_log
