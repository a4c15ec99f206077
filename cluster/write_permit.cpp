#include "cluster/write_permit.hpp"

#include <fmt/format.h>

namespace sessionrt::cluster {

write_permit::write_permit(const clock& monotonic, std::string node_id) : clock_(monotonic), node_(std::move(node_id)) {}

void write_permit::start(std::int64_t ttl_ms, std::int64_t granted_sent_at_ms) {
  // Close first, so a writer never sees the new TTL with the old lease's renewal time.
  held_.store(false);
  ttl_ms_.store(ttl_ms);
  last_renewal_.store(granted_sent_at_ms);
  held_.store(ttl_ms > 0);
}

void write_permit::renewed(std::int64_t sent_at_ms) {
  std::int64_t prev = last_renewal_.load();
  while (prev < sent_at_ms && !last_renewal_.compare_exchange_weak(prev, sent_at_ms)) {
  }
}

void write_permit::lost() { held_.store(false); }

std::int64_t write_permit::valid_until_ms() const {
  if (!held_.load()) return 0;
  return last_renewal_.load() + ttl_ms_.load() / 2;
}

status write_permit::check() const {
  if (!held_.load())
    return {errc::locked, fmt::format("node {} holds no live lease: it may not write (its shards may belong to another "
                                      "node); it must join again", node_)};
  const std::int64_t age = clock_.now_ms() - last_renewal_.load();
  const std::int64_t limit = ttl_ms_.load() / 2;
  if (age >= limit)
    return {errc::locked, fmt::format("node {} may not write: its lease was last renewed {} ms ago, the limit is {} ms "
                                      "(TTL/2); until a renewal succeeds another node may take its shards",
                                      node_, age, limit)};
  return {};
}

}  // namespace sessionrt::cluster
