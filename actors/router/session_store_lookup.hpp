// session_store_lookup: which row of sessions.json a key names, among the legacy aliases older
// versions wrote [R§1.2 "Store lookup and legacy aliases"]. Split from session_key (the key
// grammar) because it reads store rows, not only key text: a Matrix fold is accepted on what the
// entry says of its room, and the freshest row wins by updatedAt. Pure: no CAF, no I/O; the
// caller owns the rows and their text for the call, and deletes legacy_keys on its next write.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/session_entry.hpp"

namespace sessionrt::actors {

// One row of sessions.json as seen by the lookup; the caller owns key text and entry.
struct stored_session_row {
  std::string_view key;
  const session_entry* entry = nullptr;
};
struct store_lookup {
  std::string normalized_key;            // where the entry lives after the next write
  std::optional<std::string> found_key;  // the stored key whose entry wins (freshest)
  std::vector<std::string> legacy_keys;  // aliases to delete on the next write, row order
};
// Candidates: the normalized key itself; every other stored key that normalizes to it; and,
// when the normalized key keeps case (Signal/Matrix), stored keys that normalize to its
// lowercase fold. A Matrix fold is accepted only when the entry's deliveryContext.to, lastTo,
// origin.nativeChannelId, origin.to or groupId (from its first '!' or '#') occurs in the
// normalized base key and, for a thread key, its thread id equals the key's thread id.
// The candidate with the largest updatedAt wins (missing = 0; ties keep the exact key, then
// row order).
store_lookup resolve_store_entry(std::string_view lookup_key,
                                 const std::vector<stored_session_row>& rows);

}  // namespace sessionrt::actors
