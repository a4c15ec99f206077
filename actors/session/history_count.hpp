// history_count: the length of a session's model context kept in its row, so that the first
// chat.history page after a start need not walk the transcript back to its root to learn
// totalMessages (storage/context_page.hpp: a page stops at an entry whose count it knows).
// The row field "sessionrtHistoryCount" = {"id", "offset", "total"}: the context built with the
// entry `id`, at byte `offset` of the session's transcript, as its leaf has `total` items. The
// session writes it with each row it stores (session_core::note_history_count, counting only
// what its transcript gained since the last count), once the context has kMinCountedItems items
// (a shorter one is cheap to walk); runtime::history seeds the page's counts with it. It is
// trusted as any count is (context_counts.hpp): only for the entry of that id at that offset,
// met on the path with no compaction in between; a row from elsewhere (OpenClaw keeps fields it
// does not know; its own rows have none) or a stale one costs the walk it saves, nothing else.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/session_entry.hpp"
#include "storage/context_counts.hpp"

namespace sessionrt::actors {

inline constexpr std::string_view kHistoryCountField = "sessionrtHistoryCount";
inline constexpr std::int64_t kMinCountedItems = 256;

struct history_count {
  std::string id;
  std::uint64_t offset = 0;
  std::int64_t total = 0;
};

// The row's count (nullopt: none, or not of that shape).
std::optional<history_count> history_count_of(const session_entry& row);
// Sets the row's count (in place when it has one), or drops it when `c.total` is below
// kMinCountedItems.
void set_history_count(session_entry& row, const history_count& c);
// Adds the row's count to `counts` (nothing when the row has none).
void remember_history_count(storage::context_counts::file& counts, const session_entry& row);

}  // namespace sessionrt::actors
