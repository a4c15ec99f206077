#include "actors/maintenance/row_cache.hpp"

#include <algorithm>
#include <functional>

namespace sessionrt::actors {
namespace {

std::uint64_t key_hash(std::string_view key) { return std::hash<std::string_view>()(key); }

}  // namespace

std::optional<std::uint64_t> row_cache::order_of(std::string_view key, const std::unordered_set<std::uint64_t>& dropped) const {
  const auto h = key_hash(key);
  auto it = std::lower_bound(by_hash_.begin(), by_hash_.end(), std::make_pair(h, std::uint64_t{0}));
  for (; it != by_hash_.end() && it->first == h; ++it) {
    if (dropped.count(it->second)) continue;
    auto at = std::lower_bound(orders_.begin(), orders_.end(), it->second) - orders_.begin();
    if (rows_[static_cast<std::size_t>(at)].key() == key) return it->second;
  }
  return std::nullopt;
}

void row_cache::apply(const row_changes& changes) {
  if (changes.full) {
    rows_.clear();
    orders_.clear();
    by_hash_.clear();
  }
  // The rows to drop: gone, or moved to a new order (order_of skips them).
  std::unordered_set<std::uint64_t> dropped;
  auto drop = [&](std::uint64_t order) { dropped.insert(order); };
  for (const auto& key : changes.gone)
    if (auto order = order_of(key, dropped)) drop(*order);
  std::vector<const changed_row*> added;
  for (const auto& c : changes.rows) {
    auto order = order_of(c.key, dropped);
    if (order && *order == c.order) {
      auto at = std::lower_bound(orders_.begin(), orders_.end(), c.order) - orders_.begin();
      rows_[static_cast<std::size_t>(at)] = maintenance_row_of(c.key, c.entry, sessions_dir_);
      continue;
    }
    if (order) drop(*order);
    added.push_back(&c);
  }
  if (!dropped.empty()) {
    std::size_t out = 0;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (dropped.count(orders_[i])) continue;
      if (out != i) {
        rows_[out] = std::move(rows_[i]);
        orders_[out] = orders_[i];
      }
      ++out;
    }
    rows_.resize(out);
    orders_.resize(out);
    by_hash_.erase(std::remove_if(by_hash_.begin(), by_hash_.end(),
                                  [&](const auto& e) { return dropped.count(e.second) > 0; }),
                   by_hash_.end());
  }
  // New orders are larger than every order the store gave before, so the added rows go after
  // the kept ones, in their own order.
  std::sort(added.begin(), added.end(), [](const changed_row* a, const changed_row* b) { return a->order < b->order; });
  const auto kept = static_cast<std::ptrdiff_t>(by_hash_.size());
  for (const auto* c : added) {
    if (!orders_.empty() && c->order <= orders_.back()) {
      // Not expected of a store; kept right anyway.
      auto at = std::lower_bound(orders_.begin(), orders_.end(), c->order) - orders_.begin();
      rows_.insert(rows_.begin() + at, maintenance_row_of(c->key, c->entry, sessions_dir_));
      orders_.insert(orders_.begin() + at, c->order);
    } else {
      rows_.push_back(maintenance_row_of(c->key, c->entry, sessions_dir_));
      orders_.push_back(c->order);
    }
    by_hash_.emplace_back(key_hash(c->key), c->order);
  }
  std::sort(by_hash_.begin() + kept, by_hash_.end());
  std::inplace_merge(by_hash_.begin(), by_hash_.begin() + kept, by_hash_.end());
  // A store that shrank a lot leaves capacity behind; give it back.
  if (rows_.capacity() > 2 * rows_.size() + 64) {
    rows_.shrink_to_fit();
    orders_.shrink_to_fit();
    by_hash_.shrink_to_fit();
  }
}

}  // namespace sessionrt::actors
