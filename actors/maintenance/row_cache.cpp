#include "actors/maintenance/row_cache.hpp"

#include <algorithm>

namespace sessionrt::actors {

void row_cache::apply(const row_changes& changes) {
  if (changes.full) {
    rows_.clear();
    orders_.clear();
    order_of_.clear();
  }
  // The rows to drop: gone, or moved to a new order.
  std::vector<std::uint64_t> dropped;
  auto drop = [&](const std::string& key) {
    auto it = order_of_.find(key);
    if (it == order_of_.end()) return;
    dropped.push_back(it->second);
    order_of_.erase(it);
  };
  for (const auto& key : changes.gone) drop(key);
  std::vector<const changed_row*> added;
  for (const auto& c : changes.rows) {
    auto it = order_of_.find(c.key);
    if (it != order_of_.end() && it->second == c.order) {
      auto at = std::lower_bound(orders_.begin(), orders_.end(), c.order) - orders_.begin();
      rows_[at] = maintenance_row_of(c.key, c.entry, sessions_dir_);
      continue;
    }
    drop(c.key);
    added.push_back(&c);
  }
  if (!dropped.empty()) {
    std::sort(dropped.begin(), dropped.end());
    std::size_t out = 0;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (std::binary_search(dropped.begin(), dropped.end(), orders_[i])) continue;
      if (out != i) {
        rows_[out] = std::move(rows_[i]);
        orders_[out] = orders_[i];
      }
      ++out;
    }
    rows_.resize(out);
    orders_.resize(out);
  }
  // New orders are larger than every order the store gave before, so the added rows go after
  // the kept ones, in their own order.
  std::sort(added.begin(), added.end(), [](const changed_row* a, const changed_row* b) { return a->order < b->order; });
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
    order_of_[c->key] = c->order;
  }
}

}  // namespace sessionrt::actors
