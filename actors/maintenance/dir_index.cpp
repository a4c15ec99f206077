#include "actors/maintenance/dir_index.hpp"

#include <algorithm>
#include <tuple>

namespace sessionrt::actors {
namespace {

// Where the session id classify() found sits in the name (it is always a slice of it).
std::size_t session_id_at(std::string_view name, std::string_view sid, storage::artifact_kind kind) {
  if (name.substr(0, sid.size()) == sid) return 0;
  if (kind == storage::artifact_kind::successor_transcript && name.substr(25, sid.size()) == sid) return 25;
  return name.find(sid);
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

void dir_index::update(std::vector<dir_file> puts, const std::vector<std::string>& erased) {
  std::vector<std::uint32_t> dead;
  for (const auto& name : erased) {
    const auto s = slot_of(name);
    if (s == npos_slot) continue;
    files_[s].dead_ = true;
    bytes_ -= files_[s].size;
    dead.push_back(s);
  }
  // Of two puts of one name, the last.
  std::stable_sort(puts.begin(), puts.end(), [](const dir_file& a, const dir_file& b) { return a.name < b.name; });
  std::vector<std::uint32_t> touched;
  touched.reserve(puts.size());
  for (std::size_t i = 0; i < puts.size(); ++i) {
    if (i + 1 < puts.size() && puts[i + 1].name == puts[i].name) continue;
    auto& f = puts[i];
    auto s = slot_of(f.name);
    if (s == npos_slot) {
      s = new_slot();
      auto& rec = files_[s];
      const auto c = storage::classify(f.name);
      rec.kind = c.kind;
      rec.has_ts_ = c.timestamp_ms.has_value();
      rec.ts_ = c.timestamp_ms.value_or(0);
      if (!c.session_id.empty()) {
        const auto at = session_id_at(f.name, c.session_id, c.kind);
        if (at != std::string_view::npos && at <= 0xffff && c.session_id.size() <= 0xffff) {
          rec.sid_at_ = static_cast<std::uint16_t>(at);
          rec.sid_len_ = static_cast<std::uint16_t>(c.session_id.size());
        }
      }
      rec.name = std::move(f.name);
    } else {
      bytes_ -= files_[s].size;  // same name: same classification
    }
    auto& rec = files_[s];
    rec.size = f.size;
    rec.mtime_ms = f.mtime_ms;
    rec.touched_ = true;
    bytes_ += rec.size;
    touched.push_back(s);
  }
  if (dead.empty() && touched.empty()) return;
  settle(touched);
  for (auto s : touched) files_[s].touched_ = false;
  for (auto s : dead) {
    files_[s] = indexed_file();
    free_.push_back(s);
  }
}

void dir_index::settle(const std::vector<std::uint32_t>& fresh) {
  const auto& f = files_;
  auto by_name = [&](std::uint32_t a, std::uint32_t b) { return f[a].name < f[b].name; };
  auto by_mtime = [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(f[a].mtime_ms, f[a].name) < std::tie(f[b].mtime_ms, f[b].name);
  };
  auto by_session = [&](std::uint32_t a, std::uint32_t b) {
    const auto sa = f[a].session_id(), sb = f[b].session_id();
    return sa != sb ? sa < sb : f[a].name < f[b].name;
  };
  auto by_ts = [&](std::uint32_t a, std::uint32_t b) { return std::tie(f[a].ts_, f[a].name) < std::tie(f[b].ts_, f[b].name); };
  auto rebuild = [&](std::vector<std::uint32_t>& order, auto member, auto less) {
    order.erase(std::remove_if(order.begin(), order.end(), [&](std::uint32_t s) { return f[s].dead_ || f[s].touched_; }),
                order.end());
    const auto kept = static_cast<std::ptrdiff_t>(order.size());
    for (auto s : fresh)
      if (member(f[s])) order.push_back(s);
    std::sort(order.begin() + kept, order.end(), less);
    std::inplace_merge(order.begin(), order.begin() + kept, order.end(), less);
  };
  auto all = [](const indexed_file&) { return true; };
  rebuild(by_name_, all, by_name);
  rebuild(by_mtime_, all, by_mtime);
  rebuild(by_session_, [](const indexed_file& r) { return r.sid_len_ > 0; }, by_session);
  rebuild(deleted_, [](const indexed_file& r) { return r.kind == storage::artifact_kind::deleted_archive && r.has_ts_; },
          by_ts);
  rebuild(reset_, [](const indexed_file& r) { return r.kind == storage::artifact_kind::reset_archive && r.has_ts_; },
          by_ts);
  rebuild(temps_, [](const indexed_file& r) { return r.kind == storage::artifact_kind::store_temp; }, by_name);
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
