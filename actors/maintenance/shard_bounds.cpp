#include "actors/maintenance/shard_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace sessionrt::actors {
namespace {

// excess * part / total overflows 64 bits for byte counts of terabytes.
__extension__ using wide = __int128;

// Never reached by a store: a cap step that does not run.
constexpr std::int64_t no_trigger = std::numeric_limits<std::int64_t>::max();

}  // namespace

std::int64_t shard_shed(std::int64_t excess, const std::vector<std::int64_t>& parts, std::size_t index) {
  if (excess <= 0 || index >= parts.size()) return 0;
  wide total = 0;
  for (auto p : parts) total += std::max<std::int64_t>(0, p);
  if (total <= 0) return 0;
  if (excess >= total) return std::max<std::int64_t>(0, parts[index]);
  // Largest remainder: each part's floor, then one more for the parts with the largest
  // remainders (ties: the lower index) until the floors' shortfall is made up.
  std::vector<std::pair<wide, std::size_t>> remainders;
  remainders.reserve(parts.size());
  wide floors = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const wide scaled = static_cast<wide>(excess) * std::max<std::int64_t>(0, parts[i]);
    floors += scaled / total;
    remainders.emplace_back(scaled % total, i);
  }
  const auto extra = static_cast<std::size_t>(excess - floors);
  std::sort(remainders.begin(), remainders.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  const wide own = static_cast<wide>(excess) * std::max<std::int64_t>(0, parts[index]) / total;
  for (std::size_t n = 0; n < extra; ++n)
    if (remainders[n].second == index) return static_cast<std::int64_t>(own + 1);
  return static_cast<std::int64_t>(own);
}

maintenance_settings shard_bounds(const maintenance_settings& agent, const std::vector<shard_load>& census,
                                  std::size_t index) {
  if (census.size() <= 1 || index >= census.size()) return agent;
  maintenance_settings out = agent;
  const shard_load& own = census[index];
  std::int64_t rows = 0, bytes = 0;
  for (const auto& s : census) {
    rows += std::max<std::int64_t>(0, s.rows);
    bytes += std::max<std::int64_t>(0, s.bytes);
  }

  const std::int64_t max_entries = std::max<std::int64_t>(0, agent.max_entries);
  if (rows > max_entries) {
    std::vector<std::int64_t> parts;
    parts.reserve(census.size());
    for (const auto& s : census) parts.push_back(s.rows);
    const std::int64_t cap = std::max<std::int64_t>(0, own.rows) - shard_shed(rows - max_entries, parts, index);
    out.max_entries = cap;
    // The scheduled cap runs when the agent reached its high water; then this shard's rows
    // above its cap go (cap + 1: the planner's "count >= high water").
    out.cap_high_water_rows = rows >= cap_high_water(agent) ? cap + 1 : no_trigger;
  }

  if (const auto high_water = high_water_bytes(agent); high_water && bytes > *agent.max_disk_bytes) {
    std::vector<std::int64_t> parts;
    parts.reserve(census.size());
    for (const auto& s : census) parts.push_back(s.bytes);
    const std::int64_t keep = std::max<std::int64_t>(0, own.bytes) - shard_shed(bytes - *high_water, parts, index);
    out.max_disk_bytes = keep;
    out.high_water_bytes = keep;
  }
  return out;
}

std::optional<std::string> sibling_sessions_dir(std::string_view sessions_dir, std::string_view agent,
                                                std::string_view own, int index) {
  const std::string tail = fmt::format("/{}/agents/{}/sessions", own, agent);
  while (sessions_dir.size() > 1 && sessions_dir.back() == '/') sessions_dir.remove_suffix(1);
  if (sessions_dir.size() <= tail.size() || sessions_dir.substr(sessions_dir.size() - tail.size()) != tail)
    return std::nullopt;
  const std::string_view root = sessions_dir.substr(0, sessions_dir.size() - tail.size());
  return fmt::format("{}/{:03d}/agents/{}/sessions", root, index, agent);
}

}  // namespace sessionrt::actors
