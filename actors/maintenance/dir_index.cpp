#include "actors/maintenance/dir_index.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace sessionrt::actors {
namespace {

// Where the session id classify() found sits in the name (it is always a slice of it).
std::size_t session_id_at(std::string_view name, std::string_view sid, storage::artifact_kind kind) {
  if (name.substr(0, sid.size()) == sid) return 0;
  if (kind == storage::artifact_kind::successor_transcript && name.substr(25, sid.size()) == sid) return 25;
  return name.find(sid);
}

// Where record `s` stands in `order`. Keys are unique (each order ends its key with the name),
// so a binary search finds it.
template <class Less>
std::size_t position_of(const std::vector<std::uint32_t>& order, std::uint32_t s, Less less) {
  const auto it = std::lower_bound(order.begin(), order.end(), s, less);
  return static_cast<std::size_t>(it - order.begin());
}

// Removes the entries at `positions` in one pass.
void take_out(std::vector<std::uint32_t>& order, std::vector<std::size_t> positions) {
  if (positions.empty()) return;
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  auto out = order.begin() + static_cast<std::ptrdiff_t>(positions[0]);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    const auto from = order.begin() + static_cast<std::ptrdiff_t>(positions[j]) + 1;
    const auto to = j + 1 < positions.size() ? order.begin() + static_cast<std::ptrdiff_t>(positions[j + 1]) : order.end();
    out = std::copy(from, to, out);
  }
  order.erase(out, order.end());
}

// Merges `in` into `order` from the back, finding each new entry's place by binary search: a few
// changes cost O(changes log n) comparisons of names and one move of what lies after them, not
// a comparison per file (a month's dir holds hundreds of thousands).
template <class Less>
void merge_in(std::vector<std::uint32_t>& order, std::vector<std::uint32_t> in, Less less) {
  if (in.empty()) return;
  std::sort(in.begin(), in.end(), less);
  auto old_end = static_cast<std::ptrdiff_t>(order.size());
  order.resize(order.size() + in.size());
  auto write = static_cast<std::ptrdiff_t>(order.size());
  for (std::size_t i = in.size(); i-- > 0;) {
    const auto at = std::lower_bound(order.begin(), order.begin() + old_end, in[i], less) - order.begin();
    std::move_backward(order.begin() + at, order.begin() + old_end, order.begin() + write);
    write -= old_end - at;
    order[static_cast<std::size_t>(--write)] = in[i];
    old_end = at;
  }
}

}  // namespace

dir_index dir_index::of(std::vector<dir_file> files) {
  dir_index index;
  index.assign(std::move(files));
  return index;
}

void dir_index::assign(std::vector<dir_file> files) {
  clear();
  update(std::move(files));
}

std::uint32_t dir_index::slot_of(std::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](std::uint32_t s, std::string_view n) { return files_[s].name < n; });
  if (it == by_name_.end() || files_[*it].name != name || files_[*it].dead_) return npos_slot;
  return *it;
}

std::uint32_t dir_index::new_slot() {
  if (!free_.empty()) {
    const auto s = free_.back();
    free_.pop_back();
    files_[s] = indexed_file();
    return s;
  }
  files_.emplace_back();
  return static_cast<std::uint32_t>(files_.size() - 1);
}

template <class Fn>
void dir_index::for_each_order(Fn&& fn) {
  const auto& f = files_;
  auto by_name = [&f](std::uint32_t a, std::uint32_t b) { return f[a].name < f[b].name; };
  auto by_mtime = [&f](std::uint32_t a, std::uint32_t b) {
    return std::tie(f[a].mtime_ms, f[a].name) < std::tie(f[b].mtime_ms, f[b].name);
  };
  auto by_session = [&f](std::uint32_t a, std::uint32_t b) {
    const auto sa = f[a].session_id(), sb = f[b].session_id();
    return sa != sb ? sa < sb : f[a].name < f[b].name;
  };
  auto by_ts = [&f](std::uint32_t a, std::uint32_t b) {
    return std::tie(f[a].ts_, f[a].name) < std::tie(f[b].ts_, f[b].name);
  };
  auto all = [](const indexed_file&) { return true; };
  fn(kNameOrder, by_name_, all, by_name);
  fn(kMtimeOrder, by_mtime_, all, by_mtime);
  fn(kSessionOrder, by_session_, [](const indexed_file& r) { return r.sid_len_ > 0; }, by_session);
  fn(kDeletedOrder, deleted_,
     [](const indexed_file& r) { return r.kind == storage::artifact_kind::deleted_archive && r.has_ts_; }, by_ts);
  fn(kResetOrder, reset_,
     [](const indexed_file& r) { return r.kind == storage::artifact_kind::reset_archive && r.has_ts_; }, by_ts);
  fn(kTempOrder, temps_, [](const indexed_file& r) { return r.kind == storage::artifact_kind::store_temp; }, by_name);
}

void dir_index::update(std::vector<dir_file> puts, const std::vector<std::string>& erased) {
  // The orders are searched by the records' keys, so the records change only after every
  // place that leaves an order has been found. A record's name, and with it its kind, session
  // id and timestamp, never changes: a file put again moves in the mtime order alone.
  std::vector<std::uint32_t> dead;
  for (const auto& name : erased) {
    const auto s = slot_of(name);
    if (s == npos_slot) continue;
    files_[s].dead_ = true;
    dead.push_back(s);
  }
  // Of two puts of one name, the last.
  std::stable_sort(puts.begin(), puts.end(), [](const dir_file& a, const dir_file& b) { return a.name < b.name; });
  std::vector<std::pair<std::uint32_t, std::int64_t>> moved;  // (record, its new mtime)
  std::vector<dir_file*> added;
  for (std::size_t i = 0; i < puts.size(); ++i) {
    if (i + 1 < puts.size() && puts[i + 1].name == puts[i].name) continue;
    const auto s = slot_of(puts[i].name);
    if (s == npos_slot) {
      added.push_back(&puts[i]);
      continue;
    }
    bytes_ = bytes_ - files_[s].size + puts[i].size;
    files_[s].size = puts[i].size;
    if (files_[s].mtime_ms != puts[i].mtime_ms) moved.emplace_back(s, puts[i].mtime_ms);
  }
  if (dead.empty() && moved.empty() && added.empty()) return;

  std::array<std::vector<std::size_t>, kOrders> leaving;  // positions, per order
  for_each_order([&](std::size_t k, std::vector<std::uint32_t>& order, auto member, auto less) {
    for (auto s : dead)
      if (member(files_[s])) leaving[k].push_back(position_of(order, s, less));
    if (k == kMtimeOrder)
      for (const auto& m : moved) leaving[k].push_back(position_of(order, m.first, less));
  });

  for (auto s : dead) bytes_ -= files_[s].size;
  std::vector<std::uint32_t> fresh;  // the new records
  for (auto* f : added) {
    const auto s = new_slot();
    auto& rec = files_[s];
    const auto c = storage::classify(f->name);
    rec.kind = c.kind;
    rec.has_ts_ = c.timestamp_ms.has_value();
    rec.ts_ = c.timestamp_ms.value_or(0);
    if (!c.session_id.empty()) {
      const auto at = session_id_at(f->name, c.session_id, c.kind);
      if (at != std::string_view::npos && at <= 0xffff && c.session_id.size() <= 0xffff) {
        rec.sid_at_ = static_cast<std::uint16_t>(at);
        rec.sid_len_ = static_cast<std::uint16_t>(c.session_id.size());
      }
    }
    rec.name = std::move(f->name);
    rec.size = f->size;
    rec.mtime_ms = f->mtime_ms;
    bytes_ += rec.size;
    fresh.push_back(s);
  }
  for (const auto& [s, mtime] : moved) files_[s].mtime_ms = mtime;

  for_each_order([&](std::size_t k, std::vector<std::uint32_t>& order, auto member, auto less) {
    std::vector<std::uint32_t> in;
    for (auto s : fresh)
      if (member(files_[s])) in.push_back(s);
    if (k == kMtimeOrder)
      for (const auto& m : moved) in.push_back(m.first);
    take_out(order, std::move(leaving[k]));
    merge_in(order, std::move(in), less);
  });
  for (auto s : dead) {
    files_[s] = indexed_file();
    free_.push_back(s);
  }
}

const indexed_file* dir_index::find(std::string_view name) const {
  const auto s = slot_of(name);
  return s == npos_slot ? nullptr : &files_[s];
}

dir_index::range dir_index::session_files(std::string_view session_id) const {
  if (session_id.empty()) return {&files_, nullptr, nullptr};
  auto lo = std::lower_bound(by_session_.begin(), by_session_.end(), session_id,
                             [&](std::uint32_t s, std::string_view id) { return files_[s].session_id() < id; });
  auto hi = std::upper_bound(lo, by_session_.end(), session_id,
                             [&](std::string_view id, std::uint32_t s) { return id < files_[s].session_id(); });
  return {&files_, by_session_.data() + (lo - by_session_.begin()), by_session_.data() + (hi - by_session_.begin())};
}

std::vector<dir_file> dir_index::files() const {
  std::vector<dir_file> out;
  out.reserve(by_name_.size());
  for (const auto& f : by_name()) out.push_back(f.file());
  return out;
}

}  // namespace sessionrt::actors
