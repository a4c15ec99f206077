#include "gateway/disk_usage.hpp"

#include <vector>

namespace sessionrt::gateway {

std::int64_t bytes_under(storage::fs& files, const std::string& dir) {
  std::int64_t total = 0;
  std::vector<std::string> todo{dir};  // directories still to list (no recursion: any depth)
  while (!todo.empty()) {
    const std::string at = std::move(todo.back());
    todo.pop_back();
    auto names = files.list_dir(at);
    if (!names.ok()) continue;
    for (const auto& name : *names) {
      const std::string path = at + "/" + name;
      auto link = files.lstat(path);
      if (!link.ok()) continue;
      if (link->is_dir()) {
        todo.push_back(path);
        continue;
      }
      if (S_ISLNK(link->mode)) {
        if (auto target = files.stat(path); target.ok() && target->is_regular())
          total += static_cast<std::int64_t>(target->size);
        continue;
      }
      if (link->is_regular()) total += static_cast<std::int64_t>(link->size);
    }
  }
  return total;
}

}  // namespace sessionrt::gateway
