#include "storage/context_page.hpp"

#include <algorithm>
#include <unordered_set>

#include "messages/context_message.hpp"
#include "messages/json_access.hpp"
#include "storage/context_builder.hpp"

namespace sessionrt::storage {
namespace {

namespace bj = boost::json;
using position = transcript_reader::position;

// A count is left every kMarkEvery path entries of a walk that had none to start from.
constexpr std::size_t kMarkEvery = 256;

bool enters(entry_type t) {
  return t == entry_type::message || t == entry_type::custom_message || t == entry_type::branch_summary;
}

// pi: a branch summary enters the context only when `entry.summary` is truthy.
bool truthy_summary(const bj::object& e) {
  const auto* sv = e.if_contains("summary");
  if (!sv || sv->is_null()) return false;
  if (sv->is_string()) return !sv->get_string().empty();
  if (sv->is_bool()) return sv->get_bool();
  if (auto n = json::as_number(*sv)) return *n != 0;
  return true;
}

// What the walk has seen, newest first. `after`: no compaction met yet, every entering entry
// is an item; `kept`: past the latest compaction, entering entries are items only once its
// firstKeptEntryId is met above them.
struct walk_state {
  bool kept_phase = false;
  std::vector<position> items;      // entering entries, newest first
  std::vector<position> tentative;  // the kept stretch, until firstKeptEntryId confirms it
  std::optional<position> compaction_at;
  std::shared_ptr<const bj::object> compaction;
  std::string first_kept_id;
  bool ended = false;  // firstKeptEntryId met: the context's oldest entry is known
};

// One entry of the path (leaf controls are not on it), walking from the leaf to the root.
status visit(transcript_reader& rd, position p, walk_state& w) {
  const index_record& rec = rd.index().at(p);
  if (!w.kept_phase) {
    if (rec.type == entry_type::compaction) {
      w.compaction_at = p;
      auto c = rd.entry(p);
      if (!c.ok()) return c.error();
      w.compaction = *c;
      if (w.compaction) w.first_kept_id = std::string(json::get_string(*w.compaction, "firstKeptEntryId").value_or(""));
      w.kept_phase = true;
    } else if (enters(rec.type)) {
      w.items.push_back(p);
    }
    return {};
  }
  if (enters(rec.type)) w.tentative.push_back(p);
  if (rec.id == w.first_kept_id) {
    w.items.insert(w.items.end(), w.tentative.begin(), w.tentative.end());
    w.tentative.clear();
    w.ended = true;
  }
  return {};
}

// The message an entry puts in the context (null: none).
bj::value context_message_of(const bj::object& e, std::size_t& unreadable) {
  switch (type_of(e)) {
    case entry_type::message:
      if (const auto* msg = message_of(e)) return *msg;
      ++unreadable;
      return nullptr;
    case entry_type::custom_message: return custom_context_message(e);
    case entry_type::branch_summary:
      if (truthy_summary(e)) return branch_summary_context_message(e);
      return nullptr;
    default: return nullptr;
  }
}

}  // namespace

result<context_page> read_context_page(transcript_reader& rd, const page_request& req,
                                       const std::shared_ptr<context_counts::file>& counts) {
  context_page page;
  auto leaf = rd.active_leaf();
  if (!leaf.ok()) return leaf.error();
  if (!*leaf) return page;
  auto& idx = rd.index();
  page.leaf_id = idx.at(**leaf).id;
  // Items needed, newest first (none for a count: the walk stops at the first count it knows).
  const std::size_t want = req.count_only ? 0 : req.limit ? req.offset + req.limit : SIZE_MAX;

  walk_state w;
  std::optional<std::int64_t> known_total;             // from `counts`
  std::vector<std::pair<position, std::size_t>> marks;  // entries to count: (entry, items newer than it)
  std::vector<position> path;                           // leaf first
  bool early = false;  // stopped with the page in hand and the total known from `counts`
  std::size_t steps = 0;
  std::optional<position> cur = *leaf;
  while (cur) {
    if (++steps > idx.size() + 1) {  // every step visits a distinct record unless there is a cycle
      page.cycle_detected = true;
      break;
    }
    const index_record& rec = idx.at(*cur);  // deque growth at either end keeps references valid
    if (rec.type != entry_type::leaf) {
      path.push_back(*cur);
      if (counts && !w.kept_phase && !known_total && !rec.id.empty()) {
        if (auto t = counts->total_at(rec.id, rec.offset)) {
          known_total = *t + static_cast<std::int64_t>(w.items.size());
          page.counted_from_memo = true;
        } else if ((path.size() - 1) % kMarkEvery == 0) {
          marks.emplace_back(*cur, w.items.size());
        }
      }
      SRT_RETURN_IF_ERROR(visit(rd, *cur, w));
      if (w.ended) break;
      if (!w.kept_phase && known_total && w.items.size() >= want) {
        early = true;
        break;
      }
    }
    if (!rec.has_parent) break;
    auto p = rd.locate(rec.parent_id);
    if (!p.ok()) return p.error();
    cur = *p;
  }
  if (page.cycle_detected) {  // the path up to its first repeat, as build_context() takes it
    truncate_at_repeat(path);
    w = walk_state{};
    for (position p : path) {
      SRT_RETURN_IF_ERROR(visit(rd, p, w));
      if (w.ended) break;
    }
    early = false;
    page.counted_from_memo = false;
    marks.clear();
  }
  page.entries_walked = path.size();

  const bool summary = !early && w.compaction != nullptr;
  const std::size_t total = early ? static_cast<std::size_t>(std::max<std::int64_t>(*known_total, 0))
                                  : w.items.size() + (summary ? 1 : 0);
  page.total = total;
  if (!early) page.counted_from_memo = false;

  // The page: places [lo, hi) of the context (0 = the oldest), newest `offset` skipped.
  const std::size_t hi = total - std::min(req.offset, total);
  const std::size_t lo = req.limit && hi > req.limit ? hi - req.limit : 0;
  page.older = lo;
  struct slot {
    std::size_t place;
    std::optional<position> entry;  // nullopt: the compaction's summary
  };
  std::vector<slot> slots;
  std::vector<position> wanted;
  for (std::size_t place = lo; place < hi && !req.count_only; ++place) {
    if (summary && place == 0) {
      slots.push_back({place, std::nullopt});
      continue;
    }
    const std::size_t j = total - 1 - place;  // items are newest first
    if (j >= w.items.size()) continue;        // a count that promised more than the walk found
    slots.push_back({place, w.items[j]});
    wanted.push_back(w.items[j]);
  }
  std::vector<std::shared_ptr<const bj::object>> read;
  if (!wanted.empty()) {
    auto got = rd.entries(wanted);
    if (!got.ok()) return got.error();
    read = std::move(*got);
  }
  std::size_t k = 0;
  for (const auto& s : slots) {
    context_page_item item;
    item.seq = static_cast<std::int64_t>(s.place) + 1;
    if (!s.entry) {
      const auto& rec = idx.at(*w.compaction_at);
      item.message = compaction_summary_context_message(*w.compaction);
      item.entry_id = rec.id;
      item.entry_offset = rec.offset;
      page.items.push_back(std::move(item));
      continue;
    }
    const auto& e = read[k++];
    if (!e) {
      ++page.unreadable_entries;
      continue;
    }
    item.message = context_message_of(*e, page.unreadable_entries);
    if (item.message.is_null()) continue;
    const auto& rec = idx.at(*s.entry);
    item.entry_id = rec.id;
    item.entry_offset = rec.offset;
    page.items.push_back(std::move(item));
  }

  // Counts for the next pages: the leaf's, and those the walk marked on the way.
  if (counts && !page.cycle_detected) {
    std::vector<std::pair<std::string, std::pair<std::uint64_t, std::int64_t>>> learned;
    const auto t = static_cast<std::int64_t>(total);
    if (marks.size() > context_counts::kMaxPerFile / 2) {  // evenly thinned, the leaf's end kept
      std::vector<std::pair<position, std::size_t>> thin;
      const std::size_t keep = context_counts::kMaxPerFile / 2;
      for (std::size_t i = 0; i < keep; ++i) thin.push_back(marks[i * marks.size() / keep]);
      marks.swap(thin);
    }
    // Oldest first, so that the bound drops the marks furthest from where pages are read.
    for (auto it = marks.rbegin(); it != marks.rend(); ++it) {
      const auto& rec = idx.at(it->first);
      learned.emplace_back(rec.id, std::make_pair(rec.offset, t - static_cast<std::int64_t>(it->second)));
    }
    const auto& lrec = idx.at(**leaf);
    if (!lrec.id.empty()) learned.emplace_back(lrec.id, std::make_pair(lrec.offset, t));
    counts->remember(learned);
  }
  return page;
}

}  // namespace sessionrt::storage
