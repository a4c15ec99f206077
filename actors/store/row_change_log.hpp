// row_change_log: the keys of a store changed (put, erased) since a reader last took them, so
// that a reader keeping its own picture of the rows (the maintenance actor's row_cache) costs
// the changes, not the store. The first take(), any take() after more changes than the log
// keeps (2x the store's rows + 1024 distinct keys), and the take() after the store was replaced
// (replaced(): a hand edit merged into a store built from the file, whose rows all have new
// session_store::order_of numbers) say "full": read every row.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "actors/store/store_replies.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::actors {

class row_change_log {
 public:
  struct taken {
    bool full = false;
    std::vector<std::string> keys;  // when !full: every key changed since the last take, once
  };
  void note(std::string_view key, std::size_t store_rows);
  // Every row is new to a reader: the store was replaced by another (orders start over).
  void replaced() {
    full_ = true;
    keys_.clear();
  }
  taken take();

 private:
  std::unordered_set<std::string> keys_;
  bool full_ = true;
};

// What a take() names, read from `store`: the changed rows present, the others gone (every row
// when full).
row_changes collect_changes(const storage::session_store& store, row_change_log::taken taken);

}  // namespace sessionrt::actors
