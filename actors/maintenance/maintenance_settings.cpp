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

}  // namespace sessionrt::actors
