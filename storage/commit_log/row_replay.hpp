// row_replay: what the commit log's row records ask of one sessions.json at start-up (the
// order is log_format.hpp's). add() takes the store's kRowChange and kStoreWritten records in
// log order; pending() sorts them into the store's order (order, then kFromSession before
// kFromStore, log order among equals), drops everything up to the last kStoreWritten (the file
// held it when it was written) and gives one change per key — its last — keys in the order of
// their first change. apply_row_changes() puts those into the store: a text replaces the row
// (in place, or appended for a key the file lacks), an empty text removes it. Applying the same
// changes again changes nothing (a replay cut short by a crash is simply run again), and a
// change older than the file's write is never applied over it (a hand edit made after that
// write stays, as a running store's merge keeps it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/commit_log/log_record.hpp"
#include "storage/session_store.hpp"

namespace sessionrt::storage::commit_log {

struct row_op {
  std::string key;
  std::string text;  // empty: the row is removed
};

class store_row_history {
 public:
  void add(row_change c);
  void add(const store_written& w);
  std::vector<row_op> pending() const;
  std::size_t changes() const { return changes_; }  // row changes added
  std::size_t covered() const;                     // ... that the last written record covers

 private:
  struct entry {
    std::uint64_t order = 0;
    std::uint8_t origin = kFromSession;
    bool written = false;
    std::string key, text;
  };
  // The store's order: a stable sort of the log order (see above); returns indexes.
  std::vector<std::size_t> store_order() const;
  std::size_t first_pending() const;  // in store_order(): the first entry after the last written one

  std::vector<entry> entries_;
  std::size_t changes_ = 0;
};

struct rows_applied {
  std::size_t put = 0, removed = 0;
  std::vector<std::string> refused;  // "<key>: why" for a text the store would not take
};

rows_applied apply_row_changes(session_store& store, const std::vector<row_op>& ops);

}  // namespace sessionrt::storage::commit_log
