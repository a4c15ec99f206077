#include "cluster/shard_layout.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"

namespace sessionrt::cluster {

std::string shards_root(std::string_view cluster_dir) { return storage::path_join(cluster_dir, "shards"); }

std::string shard_dir_name(int index) { return fmt::format("{:03d}", index); }

std::optional<int> parse_shard_dir_name(std::string_view name) {
  if (name.size() < 3 || name.size() > 4) return std::nullopt;
  int v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v >= max_shards_per_agent || shard_dir_name(v) != name) return std::nullopt;
  return v;
}

result<std::string> shard_dir(std::string_view cluster_dir, const shard_id& shard) {
  if (auto st = storage::check_agent_id(shard.agent); !st.ok()) return st;
  if (shard.index < 0 || shard.index >= max_shards_per_agent)
    return status(errc::invalid_argument, fmt::format("shard index {} of agent {} is outside 0..{}", shard.index,
                                                      shard.agent, max_shards_per_agent - 1));
  return storage::path_join(storage::path_join(shards_root(cluster_dir), shard.agent), shard_dir_name(shard.index));
}

result<std::string> shard_sessions_dir(std::string_view cluster_dir, const shard_id& shard) {
  auto dir = shard_dir(cluster_dir, shard);
  if (!dir.ok()) return dir.error();
  return storage::agent_sessions_dir(*dir, shard.agent);
}

result<std::string> shard_store_path(std::string_view cluster_dir, const shard_id& shard) {
  auto dir = shard_dir(cluster_dir, shard);
  if (!dir.ok()) return dir.error();
  return storage::store_path(*dir, shard.agent);
}

namespace {

// Names in `dir`; an absent directory has none.
result<std::vector<std::string>> names_in(storage::fs& fs, const std::string& dir) {
  auto names = fs.list_dir(dir);
  if (!names.ok() && names.error().code() == errc::not_found) return std::vector<std::string>();
  if (!names.ok()) return names.error().with_context("listing the shards");
  std::sort(names->begin(), names->end());
  return names;
}

bool is_dir(storage::fs& fs, const std::string& path) {
  auto info = fs.lstat(path);
  return info.ok() && info->is_dir();
}

}  // namespace

result<shard_listing> list_shards(storage::fs& fs, const std::string& cluster_dir) {
  shard_listing out;
  const std::string root = shards_root(cluster_dir);
  auto agents = names_in(fs, root);
  if (!agents.ok()) return agents.error();
  for (const auto& agent : *agents) {
    const std::string agent_dir = storage::path_join(root, agent);
    if (!storage::check_agent_id(agent).ok() || !is_dir(fs, agent_dir)) {
      out.skipped.push_back(agent_dir);
      continue;
    }
    auto shards = names_in(fs, agent_dir);
    if (!shards.ok()) return shards.error();
    std::vector<listed_shard> mine;
    for (const auto& name : *shards) {
      const std::string dir = storage::path_join(agent_dir, name);
      auto index = parse_shard_dir_name(name);
      if (!index || !is_dir(fs, dir)) {
        out.skipped.push_back(dir);
        continue;
      }
      mine.push_back({{agent, *index}, dir});
    }
    std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.shard.index < b.shard.index; });
    out.shards.insert(out.shards.end(), mine.begin(), mine.end());
  }
  return out;
}

}  // namespace sessionrt::cluster
