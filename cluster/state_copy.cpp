#include "cluster/state_copy.hpp"

#include <fcntl.h>

#include "storage/commit_log/log_files.hpp"
#include "storage/commit_log/log_reader.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::cluster::state_copy {

std::string without_trailing_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

result<std::optional<std::string>> log_with_records(storage::fs& fs, const std::string& dir) {
  namespace cl = storage::commit_log;
  const std::string logs = cl::log_dir(dir);
  if (!fs.lstat(logs).ok()) return std::optional<std::string>();
  auto numbers = cl::list_logs(fs, logs);
  if (!numbers.ok()) return numbers.error();
  for (auto n : *numbers) {
    const std::string path = cl::log_path(logs, n);
    auto fd = fs.open(path, O_RDONLY);
    if (!fd.ok()) return fd.error();
    cl::log_reader reader(fs, *fd, path, n);
    std::string record;
    int records = 0;
    while (records < 2 && reader.next(record)) ++records;  // the first is the log's header
    (void)fs.close(*fd);
    if (records > 1) return std::optional<std::string>(path);
  }
  return std::optional<std::string>();
}

bool left_out(std::string_view name) {
  return name.starts_with(storage::store_file_name) || name.ends_with(".lock") || name.ends_with(".tmp");
}

}  // namespace sessionrt::cluster::state_copy
