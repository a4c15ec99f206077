// row_cache: the maintenance planners' picture of one store's rows (maintenance_row values, in
// store order), kept from pass to pass and brought up to date from the store's row_changes, so
// that a pass costs the rows changed since the last one. Pure: no CAF, no I/O.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "actors/store/store_replies.hpp"
#include "actors/maintenance/maintenance_planner.hpp"

namespace sessionrt::actors {

class row_cache {
 public:
  explicit row_cache(std::string sessions_dir = {}) : sessions_dir_(std::move(sessions_dir)) {}

  // A full change replaces the picture; otherwise the changed rows are entered (a row whose
  // order changed, erased and added again, moves to its new place) and the gone ones dropped.
  void apply(const row_changes& changes);
  // In store order (session_store::order_of).
  const std::vector<maintenance_row>& rows() const { return rows_; }

 private:
  // The order of the row of `key`, when it is here and not in `dropped`.
  std::optional<std::uint64_t> order_of(std::string_view key, const std::unordered_set<std::uint64_t>& dropped) const;

  std::string sessions_dir_;
  std::vector<maintenance_row> rows_;
  std::vector<std::uint64_t> orders_;  // orders_[i]: rows_[i]'s order (ascending)
  // (hash of key, order), sorted: finds a key's row without a second copy of every key.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> by_hash_;
};

}  // namespace sessionrt::actors
