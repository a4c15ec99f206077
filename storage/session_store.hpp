// session_store: the rows of one sessions.json in memory (sessionKey -> session_entry) [R§2.1].
// - Iteration is in insertion order, as a JavaScript object's string keys: a new key is
//   appended, replacing a row keeps its place, erase keeps the others' order. (JavaScript would
//   list integer-like keys such as "42" first; session keys never look like that, and a store
//   loaded from a file keeps the file's order.)
// - Lookup is O(1) on average; built for tens of thousands of rows.
// - The store keeps, per row, the row's text as JSON.stringify(store, null, 2) writes it, so
//   serializing after a change re-serializes only the rows changed since the last time. For
//   that, every change goes through this API: find_for_update() marks the row dirty; the
//   returned pointer may be used to change the row until the next call on the store and no
//   longer (a change made through a stale pointer would be missed by the cache).
// - release_clean_rows() drops the parsed form of every row whose text is up to date and
//   keeps only that text (less than half the memory); such a row is parsed again from its
//   text when it is next read or changed. The store actor calls it after each save, so the
//   rows of sessions nobody talks to cost their sessions.json text, not a JSON object.
// - spill_clean_rows() goes further once the store's exact text is on disk: each clean row
//   keeps only where its text is in that file (store_backing.hpp), ~30 bytes instead of ~1 KB,
//   and is read back from the file when next read, changed or serialized (runs of spilled rows
//   in one read each). If a spilled row cannot be read back (I/O error, or another program
//   changed the file in place), the row reads as empty and every later append_pretty() fails
//   with that error, so the file on disk is never overwritten with a store missing rows.
// - Not thread-safe, not even for concurrent const calls (serialization fills the cache,
//   reading a released row parses it): one owner, the store actor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <deque>

#include <boost/unordered/unordered_flat_map.hpp>
#include <vector>

#include "messages/session_entry.hpp"
#include "messages/status.hpp"
#include "storage/durable_file.hpp"
#include "storage/store_backing.hpp"

namespace sessionrt::storage {

class session_store {
  struct slot;

 public:
  // One row seen by iteration.
  struct row {
    std::string_view key;
    const session_entry& entry;
    std::uint64_t order;  // order_of(key)
  };

  class iterator {
   public:
    using value_type = row;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    row operator*() const;
    iterator& operator++();
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& o) const { return pos_ == o.pos_; }

   private:
    friend class session_store;
    iterator(const session_store* store, std::size_t pos);
    void skip_erased();
    const session_store* store_ = nullptr;
    std::size_t pos_ = 0;
  };

  session_store();
  // A moved-from store is empty. Copies and moves take a text_version() no other store has had.
  session_store(session_store&& other) noexcept;
  session_store& operator=(session_store&& other) noexcept;
  session_store(const session_store& other);
  session_store& operator=(const session_store& other);

  // nullptr when there is no row for `key`. A spilled row that cannot be read back reads as
  // an empty row here (and sets spill_error()); lookup() tells the two apart.
  const session_entry* find(std::string_view key) const;
  // nullptr when there is no row for `key`; the error (naming the key) when the row is there
  // but its text could not be read back from the file it was spilled to.
  result<const session_entry*> lookup(std::string_view key) const;
  // The row to change in place, marked dirty; nullptr when absent. See the contract above.
  session_entry* find_for_update(std::string_view key);
  // Sets the row of `key`: replaces an existing row in its place, or appends a new one.
  // Returns true when the key was new.
  bool upsert(std::string_view key, session_entry entry);
  // Sets the row of `key` from its text as append_row_text() writes it for that key; parsed
  // only when read. Returns true when the key was new; errc::invalid_argument (row unchanged)
  // for a text that does not start with the key or is not valid UTF-8.
  result<bool> upsert_text(std::string_view key, std::string text);
  // A row's text in sessions.json as this store writes it: "\n  " + the JSON-quoted key + ": "
  // + the row pretty-printed at level 1.
  static void append_row_text(std::string& out, std::string_view key, const session_entry& row);
  // The row back from append_row_text's text for `key` (errc::corrupt if it does not parse).
  static result<session_entry> parse_row_text(std::string_view key, std::string_view text);
  // Removes the row of `key`; false when there was none.
  bool erase(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // A number that orders the rows as iteration (and sessions.json) does, and never changes
  // while the row stays: a row added later has a larger one; a row erased and added again
  // gets a new one. Never reused by this store. nullopt for no such row.
  std::optional<std::uint64_t> order_of(std::string_view key) const;
  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  void clear();
  void reserve(std::size_t rows);

  // Every key, in iteration order, without reading any row (views valid until the next change).
  std::vector<std::string_view> keys() const;

  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, slots_.size()); }

  // Appends JSON.stringify(store, null, 2) (no trailing newline), re-serializing only the rows
  // changed since the last serialization. Fails only when spilled rows cannot be read back
  // (see above); `out` is then left as it was.
  status append_pretty(std::string& out) const;
  // The same text followed by `trailer`, written with `to` in gathered batches (the rows'
  // own texts, not copied: fs::write_gather), each batch at least `piece_bytes` long except
  // the last, after a size hint of the whole length. `scratch` holds only rows read back from
  // the backing file, a run at a time, so the text is never whole in memory. A write's error
  // is returned as it is; a row that cannot be read back fails as in append_pretty, with what
  // was written already gone.
  status write_pretty(std::string& scratch, std::size_t piece_bytes, std::string_view trailer,
                      const piece_writer& to) const;
  // append_pretty into a new string; throws std::runtime_error where append_pretty fails.
  std::string to_pretty() const;
  // Brings the per-row text up to date and returns a number that changes whenever the store's
  // text may have changed since the previous call (equal numbers: identical text). Numbers are
  // unique across all stores of the process, so a version saved from one store never matches
  // another store that replaced it.
  std::uint64_t text_version() const;
  // Brings the text up to date, then keeps only the text of every row; returns how many rows
  // were released. Pointers from find() / find_for_update() are invalid afterwards.
  std::size_t release_clean_rows();
  // When `version` is still text_version() and `backing` holds exactly the text serialized at
  // that version (what append_pretty gave, from byte 0), keeps only the place in `backing` of
  // every clean row (rows spilled earlier move to `backing` too); returns how many rows are
  // spilled now. Otherwise changes nothing and returns 0. Pointers from find() /
  // find_for_update() are invalid afterwards.
  std::size_t spill_clean_rows(std::shared_ptr<const store_backing> backing, std::uint64_t version);
  // The error that stopped a spilled row from being read back, if one did.
  const status& spill_error() const { return spill_error_; }

 private:
  // append_pretty (to null: the whole text into `out`) and write_pretty (written with *to).
  status pretty(std::string& out, std::size_t piece_bytes, std::string_view trailer, const piece_writer* to) const;
  // A row in memory: parsed, or only its text (released).
  struct row_mem {
    session_entry entry;  // the row; empty while released
    std::string text;     // "\n  " + JSON key + ": " + pretty row at level 1, when !dirty
    bool released = false;  // entry is parsed from text on the next access
  };
  struct slot {
    std::unique_ptr<char[]> key;           // the sessionKey's bytes (index_ views them: they never move)
    std::uint32_t key_len = 0;
    std::uint32_t len = 0;                 // spilled: the text's length
    std::uint64_t at = 0;                  // spilled: where the text is in backing_
    std::uint64_t order = 0;               // order_of
    mutable std::unique_ptr<row_mem> mem;  // null while spilled
    bool dirty = true;
    bool live = true;
    std::string_view key_view() const { return {key.get(), key_len}; }
  };
  // The slot's row, read back and/or parsed from its text first when it was spilled/released.
  const session_entry& entry_of(const slot& s) const;
  // Brings a spilled slot's text back into memory (released); the error (naming the key) when
  // it cannot be read.
  status unspill(const slot& s) const;
  std::size_t text_size(const slot& s) const { return s.mem ? s.mem->text.size() : s.len; }
  struct key_hash {
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };

  // Appends a new slot for `key` (dirty, an empty row in memory) and indexes it.
  slot& add_slot(std::string_view key);
  void refresh() const;
  void compact_if_sparse();
  void bump_version() const;

  // Insertion order; erased rows are left as holes. A deque: no spare capacity to pay for.
  mutable std::deque<slot> slots_;
  boost::unordered_flat_map<std::string_view, std::size_t, key_hash> index_;  // key -> slot position
  std::size_t holes_ = 0;
  std::uint64_t next_order_ = 0;
  mutable std::size_t dirty_count_ = 0;
  mutable std::uint64_t version_ = 0;
  std::shared_ptr<const store_backing> backing_;  // where spilled rows are
  mutable status spill_error_;                    // a spilled row could not be read back
};

}  // namespace sessionrt::storage
