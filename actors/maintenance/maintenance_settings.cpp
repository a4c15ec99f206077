#include "actors/maintenance/maintenance_settings.hpp"

#include <algorithm>

namespace sessionrt::actors {

std::optional<maintenance_mode> parse_maintenance_mode(std::string_view text) {
  if (text == "warn") return maintenance_mode::warn;
  if (text == "enforce") return maintenance_mode::enforce;
  return std::nullopt;
}

const char* maintenance_mode_name(maintenance_mode mode) noexcept {
  return mode == maintenance_mode::enforce ? "enforce" : "warn";
}

std::int64_t entry_high_water(std::int64_t max) noexcept {
  if (max <= 0) return 1;
  if (max <= 49) return max + 1;
  return max + std::max<std::int64_t>(25, (max + 9) / 10);
}

std::int64_t cap_high_water(const maintenance_settings& s) noexcept {
  return s.cap_high_water_rows ? *s.cap_high_water_rows : entry_high_water(s.max_entries);
}

std::optional<std::int64_t> reset_archive_retention(const maintenance_settings& s) noexcept {
  if (s.reset_archive_retention_disabled) return std::nullopt;
  return s.reset_archive_retention_ms.value_or(s.prune_after_ms);
}

std::optional<std::int64_t> high_water_bytes(const maintenance_settings& s) noexcept {
  if (!s.max_disk_bytes) return std::nullopt;
  const std::int64_t max = *s.max_disk_bytes;
  std::int64_t hw = s.high_water_bytes ? *s.high_water_bytes : std::max<std::int64_t>(1, (max / 10) * 8 + (max % 10) * 8 / 10);
  return std::clamp<std::int64_t>(hw, std::min<std::int64_t>(1, max), max);
}

maintenance_settings shard_share(const maintenance_settings& s, int shards) noexcept {
  if (shards <= 1) return s;
  auto share = [shards](std::int64_t v) { return std::max<std::int64_t>(1, (v + shards - 1) / shards); };
  maintenance_settings out = s;
  if (s.max_entries > 0) out.max_entries = share(s.max_entries);
  if (s.max_disk_bytes && *s.max_disk_bytes > 0) out.max_disk_bytes = share(*s.max_disk_bytes);
  if (s.high_water_bytes && *s.high_water_bytes > 0) out.high_water_bytes = share(*s.high_water_bytes);
  return out;
}

}  // namespace sessionrt::actors
