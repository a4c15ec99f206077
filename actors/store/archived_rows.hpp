// archived_rows: which rows of one store are archived (archivedAt set), so that the store
// actor's high-water notice counts the unarchived rows, as the cap does (OpenClaw 2026.9's
// maxEntries counts unarchived rows), without reading every row on each put.
// The owner tells it every put and erase of the store; until reset() has counted the store once
// (known() false) it knows nothing. A put's row is read only for its archivedAt: a row object, or
// a row text as session_store::append_row_text writes it (row_text_archived). Not thread-safe:
// one owner, the store actor.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <boost/unordered/unordered_flat_set.hpp>

#include "storage/session_store.hpp"

namespace sessionrt::actors {

// Whether a row written by session_store::append_row_text has a top-level archivedAt: its own
// members are the lines indented four spaces ("\n    \"archivedAt\": "); a nested object's are
// indented further and a string value holds no raw newline, so nothing else matches.
bool row_text_archived(std::string_view text);

class archived_rows {
 public:
  bool known() const { return known_; }
  // Counts the store's archived rows (reads each row once); known() from now on.
  void reset(const storage::session_store& store);
  // Unknown again (the store was replaced by a merged copy): the next count reads it whole.
  void forget();
  // The row of `key` was put, archived or not / was erased.
  void put(std::string_view key, bool archived);
  void erase(std::string_view key);
  // Rows without archivedAt in a store of `rows` rows (known() only).
  std::size_t unarchived(std::size_t rows) const { return rows > keys_.size() ? rows - keys_.size() : 0; }
  std::size_t archived() const { return keys_.size(); }

 private:
  bool known_ = false;
  boost::unordered_flat_set<std::string> keys_;
};

}  // namespace sessionrt::actors
