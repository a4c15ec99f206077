// The row's context count (history_count.hpp) and the session's upkeep of it.
#include "actors/session/history_count.hpp"

#include "actors/session/session_core.hpp"
#include "messages/json_access.hpp"
#include "storage/context_page.hpp"

namespace sessionrt::actors {

std::optional<history_count> history_count_of(const session_entry& row) {
  const auto* v = row.json().if_contains(kHistoryCountField);
  if (!v || !v->is_object()) return std::nullopt;
  const auto& o = v->get_object();
  const auto id = json::get_string(o, "id");
  const auto offset = json::get_number(o, "offset");
  const auto total = json::get_number(o, "total");
  if (!id || id->empty() || !offset || !total || *offset < 0 || *total < 0 || *offset > 9e15 || *total > 9e15)
    return std::nullopt;
  return history_count{std::string(*id), static_cast<std::uint64_t>(*offset), static_cast<std::int64_t>(*total)};
}

void set_history_count(session_entry& row, const history_count& c) {
  if (c.total < kMinCountedItems) return row.erase(kHistoryCountField);
  row.json()[kHistoryCountField] = boost::json::object{
      {"id", c.id}, {"offset", static_cast<std::int64_t>(c.offset)}, {"total", c.total}};
}

void remember_history_count(storage::context_counts::file& counts, const session_entry& row) {
  if (auto c = history_count_of(row)) counts.remember({{c->id, {c->offset, c->total}}});
}

void session_core::note_opened_context(std::size_t total) {
  storage::transcript_reader& rd = transcript_->reader();
  const auto& leaf = transcript_->leaf_id();
  if (!leaf) return;
  auto at = rd.locate(*leaf);
  if (!at.ok() || !*at) return;
  if (!history_counts_ || history_counts_path_ != rd.path()) {
    history_counts_ = std::make_shared<storage::context_counts::file>();
    history_counts_path_ = rd.path();
  }
  // Opening built the whole context: its length is known, the first count after it is free.
  history_counts_->remember({{*leaf, {rd.index().at(**at).offset, static_cast<std::int64_t>(total)}}});
}

void session_core::note_history_count() {
  // Lines still buffered are not in the file yet: the next row write counts them.
  if (!transcript_ || !row_ || transcript_->pending_bytes() > 0) return;
  storage::transcript_reader& rd = transcript_->reader();
  if (!history_counts_ || history_counts_path_ != rd.path()) {  // another file: what was counted is of no use
    history_counts_ = std::make_shared<storage::context_counts::file>();
    history_counts_path_ = rd.path();
    remember_history_count(*history_counts_, *row_);  // a count an earlier run of the session left
  }
  // A count, no item: it walks the index from the leaf to the last count (what the turn
  // appended) and leaves the leaf's count in history_counts_; no line is read or parsed.
  storage::page_request count;
  count.count_only = true;
  auto page = storage::read_context_page(rd, count, history_counts_);
  if (!page.ok() || !page->leaf_id || page->cycle_detected) return;
  auto at = rd.locate(*page->leaf_id);
  if (!at.ok() || !*at) return;
  set_history_count(*row_, {*page->leaf_id, rd.index().at(**at).offset, static_cast<std::int64_t>(page->total)});
}

}  // namespace sessionrt::actors
