#include "storage/session_store.hpp"

#include <atomic>
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "messages/utf8.hpp"

namespace sessionrt::storage {

session_store::iterator::iterator(const session_store* store, std::size_t pos) : store_(store), pos_(pos) {
  skip_erased();
}

void session_store::iterator::skip_erased() {
  while (pos_ < store_->slots_.size() && !store_->slots_[pos_].live) ++pos_;
}

session_store::row session_store::iterator::operator*() const {
  const slot& s = store_->slots_[pos_];
  return row{s.key_view(), store_->entry_of(s), s.order};
}

std::vector<std::string_view> session_store::keys() const {
  std::vector<std::string_view> out;
  out.reserve(index_.size());
  for (const auto& s : slots_)
    if (s.live) out.push_back(s.key_view());
  return out;
}

session_store::iterator& session_store::iterator::operator++() {
  ++pos_;
  skip_erased();
  return *this;
}

namespace {
std::atomic<std::uint64_t> last_version{0};

// Rows whose text is not valid UTF-8 (the writer passes it through, the reader refuses it)
// stay parsed: only for valid text does parse(stringify(x)) == x hold.
bool can_shed(const std::string& text) { return is_valid_utf8(text); }

std::unique_ptr<char[]> key_bytes(std::string_view key) {
  auto bytes = std::make_unique_for_overwrite<char[]>(key.size());
  std::copy(key.begin(), key.end(), bytes.get());
  return bytes;
}
}  // namespace

// "\n  " + the JSON-quoted key + ": ": how a row's text starts.
static std::string row_text_prefix(std::string_view key) {
  std::string prefix = "\n  ";
  json::append_string(prefix, key);
  prefix += ": ";
  return prefix;
}

// The length of row_text_prefix(key) when `text` starts with it, else 0. Built only for a
// key with something to escape: every row a turn sends passes here.
static std::size_t row_prefix_length(std::string_view text, std::string_view key) {
  const bool plain = std::none_of(key.begin(), key.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
  });
  if (!plain) {
    const std::string prefix = row_text_prefix(key);
    return text.starts_with(prefix) ? prefix.size() : 0;
  }
  const std::size_t n = key.size() + 7;  // \n, 2 spaces, the quoted key, ": "
  if (text.size() < n || !text.starts_with("\n  \"") || text.substr(4, key.size()) != key ||
      text.substr(4 + key.size(), 3) != "\": ")
    return 0;
  return n;
}

// A spilled row's text read back must start with its key, else the file was changed under it.
static status check_read_back(std::string_view key, std::string_view text, const store_backing& backing) {
  if (row_prefix_length(text, key) > 0) return {};
  return status(errc::corrupt, fmt::format("{} was changed in place by another program: the row of {} is no longer "
                                           "where this runtime wrote it",
                                           backing.path(), key));
}

status session_store::unspill(const slot& s) const {
  if (s.mem) return {};
  std::string text;
  status st = backing_ ? backing_->read(s.at, s.len, text) : status(errc::internal, "spilled row without a backing file");
  if (st.ok()) st = check_read_back(s.key_view(), text, *backing_);
  if (!st.ok()) {
    st = st.with_context("reading back the row of " + std::string(s.key_view()));
    if (spill_error_.ok()) spill_error_ = st;
    return st;
  }
  s.mem = std::make_unique<row_mem>();
  s.mem->text = std::move(text);
  s.mem->released = true;
  return {};
}

const session_entry& session_store::entry_of(const slot& s) const {
  static const session_entry unreadable;
  if (!unspill(s).ok()) return unreadable;
  row_mem& m = *s.mem;
  if (!m.released) return m.entry;
  auto row = parse_row_text(s.key_view(), m.text);
  m.entry = row.ok() ? std::move(*row) : session_entry();
  m.released = false;
  return m.entry;
}

result<session_entry> session_store::parse_row_text(std::string_view key, std::string_view text) {
  const std::size_t prefix = row_prefix_length(text, key);
  if (prefix == 0) return status(errc::corrupt, "a session row's text does not start with its key");
  json::parse_limits limits;
  limits.max_bytes = text.size();
  limits.max_depth = 1u << 20;  // whatever depth the row was loaded with
  auto row = json::parse_object(text.substr(prefix), limits);
  if (!row.ok()) return row.error();
  return session_entry(std::move(*row));
}

std::size_t session_store::release_clean_rows() {
  refresh();
  std::size_t n = 0;
  for (slot& s : slots_) {
    if (!s.live || !s.mem || s.mem->released || !can_shed(s.mem->text)) continue;
    s.mem->entry = session_entry();
    s.mem->text.shrink_to_fit();  // refresh() leaves the scratch buffer's spare capacity
    s.mem->released = true;
    ++n;
  }
  return n;
}

std::size_t session_store::spill_clean_rows(std::shared_ptr<const store_backing> backing, std::uint64_t version) {
  if (!backing || version != text_version() || !spill_error_.ok()) return 0;
  // The layout append_pretty writes: '{', the row texts separated by ',', "\n}".
  std::uint64_t pos = 1;
  bool first = true;
  std::size_t n = 0;
  for (slot& s : slots_) {
    if (!s.live) continue;
    if (!first) ++pos;
    first = false;
    const std::size_t len = text_size(s);
    if (!s.mem || can_shed(s.mem->text)) {
      s.mem.reset();
      s.at = pos;
      s.len = static_cast<std::uint32_t>(len);
      ++n;
    }
    pos += len;
  }
  backing_ = std::move(backing);
  return n;
}

void session_store::bump_version() const { version_ = last_version.fetch_add(1, std::memory_order_relaxed) + 1; }

session_store::session_store() { bump_version(); }

session_store::session_store(session_store&& other) noexcept { *this = std::move(other); }

session_store& session_store::operator=(session_store&& other) noexcept {
  if (this == &other) return *this;
  // Keys live on the heap, owned by their slots: moving the deque keeps the index's views valid.
  slots_ = std::move(other.slots_);
  index_ = std::move(other.index_);
  holes_ = other.holes_;
  next_order_ = other.next_order_;
  dirty_count_ = other.dirty_count_;
  version_ = other.version_;
  backing_ = std::move(other.backing_);
  spill_error_ = std::move(other.spill_error_);
  other.clear();
  return *this;
}

session_store::session_store(const session_store& other) { *this = other; }

session_store& session_store::operator=(const session_store& other) {
  if (this == &other) return *this;
  clear();
  index_.reserve(other.size());
  backing_ = other.backing_;
  spill_error_ = other.spill_error_;
  for (const slot& s : other.slots_) {
    if (!s.live) continue;
    slot copy;
    copy.key = key_bytes(s.key_view());
    copy.key_len = s.key_len;
    if (s.mem) copy.mem = std::make_unique<row_mem>(*s.mem);
    copy.at = s.at;
    copy.len = s.len;
    copy.order = s.order;
    copy.dirty = s.dirty;
    if (copy.dirty) ++dirty_count_;
    index_.emplace(copy.key_view(), slots_.size());
    slots_.push_back(std::move(copy));
  }
  next_order_ = other.next_order_;
  bump_version();
  return *this;
}

std::optional<std::uint64_t> session_store::order_of(std::string_view key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return slots_[it->second].order;
}

const session_entry* session_store::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entry_of(slots_[it->second]);
}

result<const session_entry*> session_store::lookup(std::string_view key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return static_cast<const session_entry*>(nullptr);
  const slot& s = slots_[it->second];
  if (status st = unspill(s); !st.ok()) return st;
  return &entry_of(s);
}

session_entry* session_store::find_for_update(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  slot& s = slots_[it->second];
  entry_of(s);
  if (!s.mem) s.mem = std::make_unique<row_mem>();  // unreadable: the caller's row replaces it
  if (!s.dirty) {
    s.dirty = true;
    ++dirty_count_;
  }
  return &s.mem->entry;
}

bool session_store::upsert(std::string_view key, session_entry entry) {
  if (auto it = index_.find(key); it != index_.end()) {
    slot& s = slots_[it->second];
    if (!s.mem) s.mem = std::make_unique<row_mem>();  // the spilled text is replaced, not read
    s.mem->entry = std::move(entry);
    s.mem->released = false;
    if (!s.dirty) {
      s.dirty = true;
      ++dirty_count_;
    }
    return false;
  }
  add_slot(key).mem->entry = std::move(entry);
  ++dirty_count_;
  return true;
}

session_store::slot& session_store::add_slot(std::string_view key) {
  slot s;
  s.key = key_bytes(key);
  s.key_len = static_cast<std::uint32_t>(key.size());
  s.order = next_order_++;
  s.mem = std::make_unique<row_mem>();
  index_.emplace(s.key_view(), slots_.size());
  slots_.push_back(std::move(s));
  bump_version();
  return slots_.back();
}

result<bool> session_store::upsert_text(std::string_view key, std::string text) {
  if (row_prefix_length(text, key) == 0 || !is_valid_utf8(text))
    return status(errc::invalid_argument,
                  fmt::format("the row text sent for {} is not a row of that key in valid UTF-8; the row is unchanged", key));
  if (auto it = index_.find(key); it != index_.end()) {
    slot& s = slots_[it->second];
    if (s.mem && !s.dirty && s.mem->text == text) return false;  // the same row again
    if (!s.mem) s.mem = std::make_unique<row_mem>();
    s.mem->entry = session_entry();
    s.mem->text = std::move(text);
    s.mem->released = true;
    if (s.dirty) {
      s.dirty = false;
      --dirty_count_;
    }
    bump_version();
    return false;
  }
  slot& s = add_slot(key);
  s.mem->text = std::move(text);
  s.mem->released = true;
  s.dirty = false;  // the text is the row's serialization already
  return true;
}

void session_store::append_row_text(std::string& out, std::string_view key, const session_entry& row) {
  out += "\n  ";
  json::append_string(out, key);
  out += ": ";
  json::append_pretty(out, row.json(), 1);
}

bool session_store::erase(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  slot& s = slots_[it->second];
  if (s.dirty) --dirty_count_;
  index_.erase(it);  // before the key's bytes go
  s = slot{};
  s.live = false;
  s.dirty = false;
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
  backing_.reset();
  spill_error_ = status();
  bump_version();
}

void session_store::reserve(std::size_t rows) { index_.reserve(rows); }

// Holes cost a skip during iteration and serialization; squeeze them out once they are many,
// which keeps erase amortized O(1).
void session_store::compact_if_sparse() {
  if (holes_ < 64 || holes_ < slots_.size() / 2) return;
  std::deque<slot> kept;
  for (slot& s : slots_) {
    if (!s.live) continue;
    index_.find(s.key_view())->second = kept.size();
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
    // A dirty slot always has its row in memory (upsert / find_for_update put it there).
    row_mem& m = *s.mem;
    text.clear();
    append_row_text(text, s.key_view(), m.entry);
    if (text != m.text) {
      changed = true;
      m.text.swap(text);
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

status session_store::append_pretty(std::string& out) const { return pretty(out, 0, {}, nullptr); }

status session_store::write_pretty(std::string& scratch, std::size_t piece_bytes, std::string_view trailer,
                                   const piece_writer& to) const {
  return pretty(scratch, piece_bytes, trailer, &to);
}

namespace {
// pretty()'s text on its way out. Whole: appended to `out`. Streamed: a list of pieces,
// written gathered once they hold a piece's worth; a piece is a row's own text (it
// stays put while the store is not changed) or a range of `out` (rows read back from the
// backing file), resolved only when handed on, as `out` may grow meanwhile.
class pretty_text {
 public:
  pretty_text(std::string& out, std::size_t piece_bytes, const piece_writer* to)
      : out_(out), piece_bytes_(piece_bytes), to_(to), streaming_(to && piece_bytes > 0) {
    if (streaming_) out_.clear();
  }
  bool streaming() const { return streaming_; }
  void put(std::string_view stable) {
    if (!streaming_) return (void)out_.append(stable);
    pieces_.push_back({stable.data(), 0, stable.size()});
    pending_ += stable.size();
  }
  // Bytes appended to `out` at [base, end) (rows read back) are part of the text.
  void put_read(std::size_t base) {
    if (!streaming_ || out_.size() == base) return;
    pieces_.push_back({nullptr, base, out_.size() - base});
    pending_ += out_.size() - base;
  }
  // At a row's end: streamed, what is held goes once it is a piece's worth.
  status drain() { return streaming_ && pending_ >= piece_bytes_ ? hand_on() : status(); }
  status hand_on() {
    if (pieces_.empty()) return {};
    views_.clear();
    for (const piece& p : pieces_) views_.emplace_back(p.ext ? p.ext : out_.data() + p.at, p.len);
    status st = (*to_)(std::span<const std::string_view>(views_));
    pieces_.clear();
    pending_ = 0;
    out_.clear();
    return st;
  }

 private:
  struct piece {
    const char* ext;  // a row's text, or nullptr: `at` in out_
    std::size_t at, len;
  };
  std::string& out_;
  const std::size_t piece_bytes_;
  const piece_writer* to_;
  const bool streaming_;
  std::vector<piece> pieces_;
  std::vector<std::string_view> views_;
  std::size_t pending_ = 0;
};
}  // namespace

status session_store::pretty(std::string& out, std::size_t piece_bytes, std::string_view trailer,
                             const piece_writer* to) const {
  refresh();
  if (!spill_error_.ok()) return spill_error_;
  pretty_text text(out, piece_bytes, to);
  const std::size_t start = out.size();
  // "{", the rows with a ',' between, "\n}" ("{}" when empty), the trailer.
  std::size_t total = 2 + index_.size() + trailer.size();
  for (const slot& s : slots_) total += s.live ? text_size(s) : 0;
  if (text.streaming()) {
    to->size_hint(total);
    out.reserve(piece_bytes + piece_bytes / 4);
  } else {
    out.reserve(out.size() + total);
  }
  if (index_.empty()) {
    text.put("{}");
    text.put(trailer);
    return text.hand_on();
  }
  text.put("{");
  bool first = true;
  // Spilled rows follow each other in the backing file as they do here (with a ',' between):
  // a run of them is read in one call.
  std::uint64_t run_at = 0, run_end = 0;
  std::vector<const slot*> run;  // the rows of the run, each checked to start with its key
  auto flush_run = [&]() -> status {
    if (run_end == run_at) return {};
    const std::size_t base = out.size();
    status st = backing_->read(run_at, static_cast<std::size_t>(run_end - run_at), out);
    for (const slot* r : run) {
      if (!st.ok()) break;
      st = check_read_back(r->key_view(), std::string_view(out).substr(base + (r->at - run_at), r->len), *backing_);
    }
    if (st.ok()) text.put_read(base);
    run_at = run_end = 0;
    run.clear();
    return st;
  };
  auto failed = [&](const status& st) {
    spill_error_ = st.with_context("reading back rows of the session store");
    if (!text.streaming()) out.resize(start);
    return spill_error_;
  };
  for (const slot& s : slots_) {
    if (!s.live) continue;
    if (s.mem) {
      if (status st = flush_run(); !st.ok()) return failed(st);
      if (!first) text.put(",");
      text.put(s.mem->text);
    } else if (run_end != run_at && s.at == run_end + 1 &&
               (!text.streaming() || run_end - run_at < piece_bytes)) {
      run_end = s.at + s.len;  // the ',' before it comes from the file too
      run.push_back(&s);
    } else {
      if (status st = flush_run(); !st.ok()) return failed(st);
      if (status st = text.drain(); !st.ok()) return st;
      if (!first) text.put(",");
      run_at = s.at;
      run_end = s.at + s.len;
      run.push_back(&s);
    }
    first = false;
    if (run_end == run_at) {
      if (status st = text.drain(); !st.ok()) return st;
    }
  }
  if (status st = flush_run(); !st.ok()) return failed(st);
  text.put("\n}");
  text.put(trailer);
  return text.hand_on();
}

std::string session_store::to_pretty() const {
  std::string out;
  if (status st = append_pretty(out); !st.ok()) throw std::runtime_error(st.to_string());
  return out;
}

}  // namespace sessionrt::storage
