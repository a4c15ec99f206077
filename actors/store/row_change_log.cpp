#include "actors/store/row_change_log.hpp"

namespace sessionrt::actors {

void row_change_log::note(std::string_view key, std::size_t store_rows) {
  if (full_) return;
  keys_.emplace(key);
  if (keys_.size() > 2 * store_rows + 1024) {
    full_ = true;
    keys_.clear();
  }
}

row_change_log::taken row_change_log::take() {
  taken t;
  t.full = full_;
  if (!full_) t.keys.assign(keys_.begin(), keys_.end());
  keys_.clear();
  full_ = false;
  return t;
}

row_changes collect_changes(const storage::session_store& store, row_change_log::taken taken) {
  row_changes out;
  out.full = taken.full;
  if (taken.full) {
    out.rows.reserve(store.size());
    for (const auto& r : store) out.rows.push_back({std::string(r.key), r.order, r.entry});
    return out;
  }
  for (auto& key : taken.keys) {
    auto order = store.order_of(key);
    const session_entry* entry = order ? store.find(key) : nullptr;
    if (entry)
      out.rows.push_back({std::move(key), *order, *entry});
    else
      out.gone.push_back(std::move(key));
  }
  return out;
}

}  // namespace sessionrt::actors
