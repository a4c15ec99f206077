#include "storage/session_store.hpp"

#include <atomic>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::storage {

session_store::iterator::iterator(const std::vector<slot>* slots, std::size_t pos) : slots_(slots), pos_(pos) {
  skip_erased();
}

void session_store::iterator::skip_erased() {
  while (pos_ < slots_->size() && !(*slots_)[pos_].live) ++pos_;
}

session_store::row session_store::iterator::operator*() const {
  const slot& s = (*slots_)[pos_];
  return row{*s.key, entry_of(s)};
}

session_store::iterator& session_store::iterator::operator++() {
  ++pos_;
  skip_erased();
  return *this;
}

namespace {
std::atomic<std::uint64_t> last_version{0};
}  // namespace

const session_entry& session_store::entry_of(const slot& s) {
  if (!s.released) return s.entry;
  // The text is "\n  " + the JSON-quoted key + ": " + the row. Only rows whose text is valid
  // UTF-8 are released, and for those parse(stringify(x)) == x.
  std::string prefix = "\n  ";
  json::append_string(prefix, *s.key);
  prefix += ": ";
  json::parse_limits limits;
  limits.max_bytes = s.text.size();
  limits.max_depth = 1u << 20;  // whatever depth the row was loaded with
  auto row = json::parse_object(std::string_view(s.text).substr(prefix.size()), limits);
  s.entry = row.ok() ? session_entry(std::move(*row)) : session_entry();
  s.released = false;
  return s.entry;
}

std::size_t session_store::release_clean_rows() {
  refresh();
  std::size_t n = 0;
  for (slot& s : slots_) {
    // Invalid UTF-8 (the writer passes it through, the reader refuses it) stays parsed.
    if (!s.live || s.released || !is_valid_utf8(s.text)) continue;
    s.entry = session_entry();
    s.text.shrink_to_fit();  // refresh() leaves the scratch buffer's spare capacity
    s.released = true;
    ++n;
  }
  return n;
}

void session_store::bump_version() const { version_ = last_version.fetch_add(1, std::memory_order_relaxed) + 1; }

session_store::session_store() { bump_version(); }

session_store::session_store(session_store&& other) noexcept { *this = std::move(other); }

session_store& session_store::operator=(session_store&& other) noexcept {
  if (this == &other) return *this;
  // Node-based map: moving it keeps every key's address, so the slots' key pointers stay valid.
  slots_ = std::move(other.slots_);
  index_ = std::move(other.index_);
  holes_ = other.holes_;
  dirty_count_ = other.dirty_count_;
  version_ = other.version_;
  other.clear();
  return *this;
}

session_store::session_store(const session_store& other) { *this = other; }

session_store& session_store::operator=(const session_store& other) {
  if (this == &other) return *this;
  clear();
  slots_.reserve(other.size());
  index_.reserve(other.size());
  for (const slot& s : other.slots_) {
    if (!s.live) continue;
    auto [it, inserted] = index_.emplace(*s.key, slots_.size());
    (void)inserted;
    slot copy;
    copy.key = &it->first;
    if (!s.released) copy.entry = s.entry;
    copy.released = s.released;
    copy.text = s.text;
    copy.dirty = s.dirty;
    if (copy.dirty) ++dirty_count_;
    slots_.push_back(std::move(copy));
  }
  bump_version();
  return *this;
}

const session_entry* session_store::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entry_of(slots_[it->second]);
}

session_entry* session_store::find_for_update(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  slot& s = slots_[it->second];
  entry_of(s);
  if (!s.dirty) {
    s.dirty = true;
    ++dirty_count_;
  }
  return &s.entry;
}

bool session_store::upsert(std::string_view key, session_entry entry) {
  // One hash lookup for both cases (loading inserts 50,000 new keys in a row).
  auto [node, inserted] = index_.try_emplace(std::string(key), slots_.size());
  if (!inserted) {
    slot& s = slots_[node->second];
    s.entry = std::move(entry);
    s.released = false;
    if (!s.dirty) {
      s.dirty = true;
      ++dirty_count_;
    }
    return false;
  }
  slot s;
  s.key = &node->first;
  s.entry = std::move(entry);
  slots_.push_back(std::move(s));
  ++dirty_count_;
  bump_version();
  return true;
}

bool session_store::erase(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  slot& s = slots_[it->second];
  if (s.dirty) --dirty_count_;
  s = slot{};
  s.live = false;
  s.dirty = false;
  index_.erase(it);
  ++holes_;
  bump_version();
  compact_if_sparse();
  return true;
}

void session_store::clear() {
  slots_.clear();
  index_.clear();
  holes_ = 0;
  dirty_count_ = 0;
  bump_version();
}

void session_store::reserve(std::size_t rows) {
  slots_.reserve(rows);
  index_.reserve(rows);
}

// Holes cost a skip during iteration and serialization; squeeze them out once they are many,
// which keeps erase amortized O(1).
void session_store::compact_if_sparse() {
  if (holes_ < 64 || holes_ < slots_.size() / 2) return;
  std::vector<slot> kept;
  kept.reserve(index_.size());
  for (slot& s : slots_) {
    if (!s.live) continue;
    index_.find(*s.key)->second = kept.size();
    kept.push_back(std::move(s));
  }
  slots_ = std::move(kept);
  holes_ = 0;
}

void session_store::refresh() const {
  if (dirty_count_ == 0) return;
  bool changed = false;
  std::string text;
  for (slot& s : slots_) {
    if (!s.live || !s.dirty) continue;
    text.clear();
    text += "\n  ";
    json::append_string(text, *s.key);
    text += ": ";
    json::append_pretty(text, s.entry.json(), 1);
    if (text != s.text) {
      changed = true;
      s.text.swap(text);
    }
    s.dirty = false;
  }
  dirty_count_ = 0;
  if (changed) bump_version();
}

std::uint64_t session_store::text_version() const {
  refresh();
  return version_;
}

void session_store::append_pretty(std::string& out) const {
  refresh();
  if (index_.empty()) {
    out += "{}";
    return;
  }
  std::size_t total = 3 + index_.size();
  for (const slot& s : slots_) total += s.text.size();
  out.reserve(out.size() + total);
  out += '{';
  bool first = true;
  for (const slot& s : slots_) {
    if (!s.live) continue;
    if (!first) out += ',';
    first = false;
    out += s.text;
  }
  out += "\n}";
}

std::string session_store::to_pretty() const {
  std::string out;
  append_pretty(out);
  return out;
}

}  // namespace sessionrt::storage
