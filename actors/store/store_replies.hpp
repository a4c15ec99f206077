// store_replies: what the store actor answers (store_actor.hpp), as plain values: a row, the
// rows, the rows changed since a reader's previous ask. No CAF: the pure classes that build or
// read them (row_change_log, row_cache) include this, not the actor layer's vocabulary
// (caf_types.hpp, which includes this and declares them as message types).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// A row as the store actor answers it.
struct entry_reply {
  bool found = false;
  session_entry entry;
  std::string error;  // set when the row exists but could not be read (found is false then)
  // A thread key without a row: its parent session (the key before ":thread:") and that
  // session's row, when it has one; the thread's first session forks from it (fork_planner.hpp).
  std::string fork_parent_key;
  std::optional<session_entry> fork_parent_row;
};

using entry_rows = std::vector<std::pair<std::string, session_entry>>;

// The store's rows changed since its reader's previous (list, changes) ask: every row when
// `full` (the first ask, or after more changes than the store keeps track of).
struct changed_row {
  std::string key;
  std::uint64_t order = 0;  // session_store::order_of
  session_entry entry;
};
struct row_changes {
  bool full = false;
  std::vector<changed_row> rows;  // changed (or, when full, every row), in no given order
  std::vector<std::string> gone;  // keys erased since (never when full)
};

}  // namespace sessionrt::actors
