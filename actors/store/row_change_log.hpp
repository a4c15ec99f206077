// row_change_log: the keys of a store changed (put, erased) since a reader last took them, so
// that a reader keeping its own picture of the rows (the maintenance actor's row_cache) costs
// the changes, not the store. The first take(), and any take() after more changes than the
// log keeps (2x the store's rows + 1024 distinct keys), says "full": read every row.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "actors/caf_types.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::actors {

class row_change_log {
 public:
  struct taken {
    bool full = false;
    std::vector<std::string> keys;  // when !full: every key changed since the last take, once
  };
  void note(std::string_view key, std::size_t store_rows);
  taken take();

 private:
  std::unordered_set<std::string> keys_;
  bool full_ = true;
};

// What a take() names, read from `store`: the changed rows present, the others gone (every row
// when full).
row_changes collect_changes(const storage::session_store& store, row_change_log::taken taken);

}  // namespace sessionrt::actors
