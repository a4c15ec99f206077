// shard_bounds: the bounds one shard's maintenance plan runs with on a cluster node
// (docs/maintenance.md, "On a cluster node"), decided against the whole agent: an agent's
// maxEntries and disk budget [R§5.3-5.4] are the agent's, however its sessions are spread over
// its shards. Pure: the agent's settings and a census of every shard of the agent in, this
// shard's settings out.
// - Rows: the agent's unarchived rows (the census's sum) at most maxEntries: the shard keeps the
//   agent's maxEntries, which none of its rows can pass, so its cap removes nothing. Above: the
//   shard sheds its proportional part of the excess (excess * rows / total, apportioned by
//   largest remainder: the parts are whole rows, each less than one row from its exact share,
//   and they sum to the excess, so the shards' caps sum to maxEntries exactly; rounding each up
//   would shed one row in every non-empty shard for an excess of one);
//   the scheduled pass's cap step runs only when the agent's total reached the agent's high
//   water (cap_high_water_rows, entry_high_water of maxEntries), a cleanup's when it is above
//   maxEntries, as for a single store.
// - Bytes (with maxDiskBytes): the agent's bytes at most maxDiskBytes: the shard keeps the
//   agent's maxDiskBytes and highWaterBytes, nothing to free. Above: the shard frees its
//   proportional part of (bytes - highWaterBytes), rounded up, its maxDiskBytes and
//   highWaterBytes both set to what it keeps.
// Proportional, not "the agent's newest maxEntries rows": the census then needs only a count and
// a size per shard, not every row's activity, and each shard decides alone; a session's shard is
// a hash of its key, so the rows a shard sheds are, in expectation, the agent's least active.
// A census of one shard (or none) gives `agent` as it is: a single store's behaviour exactly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/maintenance/maintenance_settings.hpp"

namespace sessionrt::actors {

// One shard in the census: its unarchived rows and the bytes of its sessions dir.
struct shard_load {
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
};

// `census[index]` is this shard; an index outside the census gives `agent` as it is.
maintenance_settings shard_bounds(const maintenance_settings& agent, const std::vector<shard_load>& census,
                                  std::size_t index);

// Part `index`'s share of `excess` apportioned over `parts` (rows or bytes per shard) by largest
// remainder (ties: the lower index): the shares sum to min(excess, sum of parts), each within
// one of excess * part / sum. 0 when excess <= 0.
std::int64_t shard_shed(std::int64_t excess, const std::vector<std::int64_t>& parts, std::size_t index);

// The sessions dir of shard `index` of the agent whose shard `own` ("017") has `sessions_dir`
// (<cluster>/shards/<agent>/<nnn>/agents/<agent>/sessions, cluster/shard_layout.hpp, whose
// spelling of <nnn> this repeats: three digits, zero-padded); nullopt when `sessions_dir` is not
// laid out so.
std::optional<std::string> sibling_sessions_dir(std::string_view sessions_dir, std::string_view agent,
                                                std::string_view own, int index);

}  // namespace sessionrt::actors
