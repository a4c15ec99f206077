#include "cluster/cluster_keys.hpp"

#include <fmt/format.h>

namespace sessionrt::cluster {
namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}
bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

status check_name(std::string_view what, std::string_view name) {
  if (name.empty()) return {errc::invalid_argument, fmt::format("{} is empty", what)};
  if (name.size() > max_name_length)
    return {errc::invalid_argument, fmt::format("{} '{}...' is longer than {} characters", what, name.substr(0, 16),
                                                max_name_length)};
  bool ok = alnum(name.front());
  for (char c : name) ok = ok && name_char(c);
  if (!ok)
    return {errc::invalid_argument,
            fmt::format("{} '{}' may only hold letters, digits, '.', '_' and '-', and must begin with a letter or digit",
                        what, name)};
  return {};
}

std::string cluster_prefix(std::string_view cluster) { return fmt::format("/sessionrt/{}/", cluster); }
std::string nodes_prefix(std::string_view cluster) { return cluster_prefix(cluster) + "nodes/"; }
std::string node_key(std::string_view cluster, std::string_view node_id) {
  return nodes_prefix(cluster) + std::string(node_id);
}
std::string shard_tables_prefix(std::string_view cluster) { return cluster_prefix(cluster) + "shards/"; }
std::string shard_table_key(std::string_view cluster, std::string_view agent_id) {
  return shard_tables_prefix(cluster) + std::string(agent_id);
}
std::string owners_prefix(std::string_view cluster) { return cluster_prefix(cluster) + "owners/"; }
std::string owner_key(std::string_view cluster, std::string_view agent_id, int shard_index) {
  return fmt::format("{}{}/{}", owners_prefix(cluster), agent_id, shard_index);
}

std::string leader_key(std::string_view cluster) { return cluster_prefix(cluster) + "leader"; }

std::string_view name_under(std::string_view key, std::string_view prefix) {
  if (key.size() <= prefix.size() || key.substr(0, prefix.size()) != prefix) return {};
  std::string_view rest = key.substr(prefix.size());
  return rest.find('/') == std::string_view::npos ? rest : std::string_view{};
}

}  // namespace sessionrt::cluster
