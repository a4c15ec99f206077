#include "storage/commit_log/row_replay.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace sessionrt::storage::commit_log {

void store_row_history::add(row_change c) {
  ++changes_;
  entry e;
  e.order = c.order;
  e.origin = c.origin;
  e.key = std::move(c.key);
  e.text = std::move(c.text);
  entries_.push_back(std::move(e));
}

void store_row_history::add(const store_written& w) {
  entry e;
  e.order = w.order;
  e.origin = kFromStore;  // the store's own record, placed as its changes are
  e.written = true;
  entries_.push_back(std::move(e));
}

std::vector<std::size_t> store_row_history::store_order() const {
  std::vector<std::size_t> idx(entries_.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [this](std::size_t a, std::size_t b) {
    const entry& x = entries_[a];
    const entry& y = entries_[b];
    if (x.order != y.order) return x.order < y.order;
    return x.origin < y.origin;
  });
  return idx;
}

std::size_t store_row_history::first_pending() const {
  const auto idx = store_order();
  std::size_t from = 0;
  for (std::size_t i = 0; i < idx.size(); ++i)
    if (entries_[idx[i]].written) from = i + 1;
  return from;
}

std::size_t store_row_history::covered() const {
  const auto idx = store_order();
  const std::size_t from = first_pending();
  std::size_t n = 0;
  for (std::size_t i = 0; i < from; ++i) n += entries_[idx[i]].written ? 0 : 1;
  return n;
}

std::vector<row_op> store_row_history::pending() const {
  const auto idx = store_order();
  std::vector<row_op> out;
  std::unordered_map<std::string, std::size_t> slot;  // key -> its place in out
  for (std::size_t i = first_pending(); i < idx.size(); ++i) {
    const entry& e = entries_[idx[i]];
    if (e.written) continue;
    auto [it, fresh] = slot.emplace(e.key, out.size());
    if (fresh)
      out.push_back({e.key, e.text});
    else
      out[it->second].text = e.text;  // the key's last change wins, at its first change's place
  }
  return out;
}

rows_applied apply_row_changes(session_store& store, const std::vector<row_op>& ops) {
  rows_applied out;
  for (const auto& op : ops) {
    if (op.text.empty()) {
      if (store.erase(op.key)) ++out.removed;
      continue;
    }
    auto put = store.upsert_text(op.key, op.text);
    if (put.ok())
      ++out.put;
    else
      out.refused.push_back(op.key + ": " + put.error().message());
  }
  return out;
}

}  // namespace sessionrt::storage::commit_log
