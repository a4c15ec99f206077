#include "cluster/shard_table.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>

#include "cluster/cluster_keys.hpp"
#include "cluster/shard_id.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::cluster {
namespace bj = boost::json;

shard_table empty_shard_table(std::string agent, int shards) {
  shard_table t;
  t.agent = std::move(agent);
  t.owners.assign(static_cast<std::size_t>(std::max(shards, 0)), std::string());
  return t;
}

std::string encode_shard_table(const shard_table& t) {
  bj::array owners;
  for (const auto& o : t.owners) owners.emplace_back(o);
  return json::to_compact(bj::object{{"agent", t.agent}, {"shards", t.shards()}, {"owners", std::move(owners)}});
}

result<shard_table> decode_shard_table(std::string_view text, std::string_view key) {
  auto bad = [&](const std::string& why) { return status(errc::corrupt, fmt::format("shard table {}: {}", key, why)); };
  auto o = json::parse_object(text, {1u << 20, 8});
  if (!o) return bad(o.error().message());
  shard_table t;
  auto agent = json::get_string(*o, "agent");
  if (!agent || !check_name("agent id", *agent).ok()) return bad("\"agent\" is missing or not an agent id");
  t.agent = std::string(*agent);
  auto shards = json::get_int(*o, "shards");
  if (!shards || *shards < 1 || *shards > max_shards_per_agent)
    return bad(fmt::format("\"shards\" must be a count from 1 to {}", max_shards_per_agent));
  const bj::array* owners = json::get_array(*o, "owners");
  if (owners == nullptr || static_cast<std::int64_t>(owners->size()) != *shards)
    return bad(fmt::format("\"owners\" must list one node id (or \"\") per shard, {} of them", *shards));
  for (const auto& v : *owners) {
    if (!v.is_string()) return bad("an owner is not a string");
    std::string id(v.get_string());
    if (!id.empty() && !check_name("node id", id).ok()) return bad(fmt::format("owner '{}' is not a node id", id));
    t.owners.push_back(std::move(id));
  }
  return t;
}

}  // namespace sessionrt::cluster
