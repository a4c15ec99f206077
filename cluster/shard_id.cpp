#include "cluster/shard_id.hpp"

#include <fmt/format.h>

#include "actors/router/session_key.hpp"

namespace sessionrt::cluster {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

shard_id shard_of(std::string_view session_key, int shards_per_agent) {
  const std::string key = actors::normalize_session_key(session_key);
  shard_id s;
  auto parsed = actors::parse_agent_session_key(key);
  s.agent = parsed ? parsed->agent_id : std::string(actors::default_agent_id);
  const auto n = static_cast<std::uint64_t>(shards_per_agent > 0 ? shards_per_agent : 1);
  s.index = static_cast<int>(fnv1a64(key) % n);
  return s;
}

std::string to_string(const shard_id& s) { return fmt::format("{}/{}", s.agent, s.index); }

}  // namespace sessionrt::cluster
