// context_page: one page of a transcript's model context, the items build_context() gives for
// the active leaf (a compaction's summary first, then messages, custom messages and branch
// summaries) from place total-offset-limit to total-offset, each with the transcript entry it
// comes from, read without building the rest.
// The walk goes from the leaf toward the root on the transcript index (which scans the file
// backward from its end only as far as the walk goes), keeps the page's entries and parses only
// those. It stops as soon as it has the page and knows the context's length `total`, which it
// learns either
//   - at the end of the context: the latest compaction's firstKeptEntryId (the cost follows the
//     context, not the file), or the root when there is no compaction; or
//   - at an entry whose count an earlier page left in `counts` (context_counts.hpp), with no
//     compaction in between: the cost follows the page and what was appended since.
// With neither (the first page of a long session that was never compacted) it walks to the root
// once and leaves counts along the way for the pages after it.
// The items, their order and `total` are build_context()'s (total = its total_messages); a
// transcript whose parent links run in a cycle is cut where build_context() cuts it.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/status.hpp"
#include "storage/context_counts.hpp"
#include "storage/transcript_reader.hpp"

namespace sessionrt::storage {

struct page_request {
  std::size_t limit = 0;   // items at most; 0 = every item from `offset` back to the first
  std::size_t offset = 0;  // newest items skipped (0: the page ends with the newest)
  // Only the length: total, leaf_id and the counts the walk leaves; no item is read or
  // parsed (a session's own count after each turn, history_count.hpp). limit / offset unused.
  bool count_only = false;
};

struct context_page_item {
  boost::json::value message;  // as build_context() puts it in the context
  std::string entry_id;        // the entry it comes from (the compaction's, for the summary)
  std::uint64_t entry_offset = 0;  // that entry's byte offset in the file
  std::int64_t seq = 0;            // its place in the whole context: 1 = the oldest item
};

struct context_page {
  std::vector<context_page_item> items;  // oldest first; unreadable entries left out (their seq skipped)
  std::size_t total = 0;                 // items in the whole context
  std::size_t older = 0;                 // items before the page (0: it starts with the first)
  std::optional<std::string> leaf_id;
  std::size_t entries_walked = 0;    // path entries the walk visited
  bool counted_from_memo = false;    // total came from `counts`, not from the walk
  std::size_t unreadable_entries = 0;
  bool cycle_detected = false;
};

// `counts`: the counts of this reader's file (context_counts::of with its path, device, inode and
// data_end()); null: nothing remembered, nothing learned.
result<context_page> read_context_page(transcript_reader& reader, const page_request& request,
                                       const std::shared_ptr<context_counts::file>& counts = nullptr);

}  // namespace sessionrt::storage
