// dir_index: the regular files of one sessions dir, classified once (storage::classify) and
// indexed the ways the maintenance planners look them up, so that a plan costs what it finds,
// not a walk over every file: by name, by the session id a name carries, by mtime (the disk
// budget's phase B order), by the timestamp of `.deleted.` / `.reset.` archives (retention),
// and the store temps apart (whether one counts depends on `now`). Pure: no I/O, no clock.
// Kept from pass to pass by dir_listing; built from a listing for a one-off plan.
//
// Compact because the maintenance actor may keep it for every file of a large dir: a file is
// one record (its name, size, mtime and the parts of its classification the planners use) and
// each order a sorted vector of record numbers. update() costs O(changes log files) comparisons
// and one move of each order's record numbers, so a pass that brings it up to date costs what
// changed, not a comparison per file.
#pragma once
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/archive_names.hpp"

namespace sessionrt::actors {

// A regular file directly in the sessions dir.
struct dir_file {
  std::string name;
  std::uint64_t size = 0;
  std::int64_t mtime_ms = 0;
};

// One file of the index: the file and what classify(name) says of it, as the planners use it.
struct indexed_file {
  std::string name;
  std::uint64_t size = 0;
  std::int64_t mtime_ms = 0;
  storage::artifact_kind kind = storage::artifact_kind::unknown;

  // Transcript kinds and trajectory sidecars: the session id the name carries ("" for none).
  std::string_view session_id() const { return std::string_view(name).substr(sid_at_, sid_len_); }
  // Archives, backups, successor transcripts: the timestamp in the name.
  std::optional<std::int64_t> timestamp_ms() const {
    return has_ts_ ? std::optional<std::int64_t>(ts_) : std::nullopt;
  }
  dir_file file() const { return {name, size, mtime_ms}; }

 private:
  friend class dir_index;
  std::int64_t ts_ = 0;
  std::uint16_t sid_at_ = 0, sid_len_ = 0;
  bool has_ts_ = false;
  bool dead_ = false;  // erased; its record is reused after the update
};

class dir_index {
 public:
  // The files of one order, as indexed_file references.
  class range {
   public:
    class iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = indexed_file;
      using difference_type = std::ptrdiff_t;
      using pointer = const indexed_file*;
      using reference = const indexed_file&;
      iterator(const std::vector<indexed_file>* files, const std::uint32_t* at) : files_(files), at_(at) {}
      reference operator*() const { return (*files_)[*at_]; }
      pointer operator->() const { return &(*files_)[*at_]; }
      iterator& operator++() { ++at_; return *this; }
      bool operator==(const iterator& o) const { return at_ == o.at_; }
      bool operator!=(const iterator& o) const { return at_ != o.at_; }

     private:
      const std::vector<indexed_file>* files_;
      const std::uint32_t* at_;
    };
    range(const std::vector<indexed_file>* files, const std::uint32_t* begin, const std::uint32_t* end)
        : files_(files), begin_(begin), end_(end) {}
    iterator begin() const { return {files_, begin_}; }
    iterator end() const { return {files_, end_}; }
    bool empty() const { return begin_ == end_; }
    std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }

   private:
    const std::vector<indexed_file>* files_;
    const std::uint32_t *begin_, *end_;
  };

  static dir_index of(std::vector<dir_file> files);

  // Replaces every file.
  void assign(std::vector<dir_file> files);
  // The erased names go first (a name not indexed is ignored), then the puts (one replaces the
  // file of its name; of two puts of one name the last wins).
  void update(std::vector<dir_file> puts, const std::vector<std::string>& erased = {});
  void put(dir_file file) { update({std::move(file)}); }
  void erase(const std::string& name) { update({}, {name}); }
  void clear() { *this = dir_index(); }

  const indexed_file* find(std::string_view name) const;
  std::size_t size() const { return by_name_.size(); }
  // Every file's size added up.
  std::uint64_t bytes() const { return bytes_; }
  range by_name() const { return range_of(by_name_); }
  // The files whose names carry `session_id` (transcripts, sidecars), in name order.
  range session_files(std::string_view session_id) const;
  // By (mtime, name).
  range by_mtime() const { return range_of(by_mtime_); }
  // The `.deleted.<ts>` / `.reset.<ts>` archives by (timestamp, name).
  range deleted_archives() const { return range_of(deleted_); }
  range reset_archives() const { return range_of(reset_); }
  range store_temps() const { return range_of(temps_); }  // in name order
  std::vector<dir_file> files() const;                   // in name order

 private:
  range range_of(const std::vector<std::uint32_t>& order) const {
    return {&files_, order.data(), order.data() + order.size()};
  }
  std::uint32_t slot_of(std::string_view name) const;  // npos_slot when not indexed
  std::uint32_t new_slot();
  // Calls fn(k, order, member, less) for each of the kOrders orders: `member` says whether a
  // record belongs in it, `less` orders its record numbers (every key ends with the name).
  template <class Fn>
  void for_each_order(Fn&& fn);
  enum order_id : std::size_t { kNameOrder, kMtimeOrder, kSessionOrder, kDeletedOrder, kResetOrder, kTempOrder, kOrders };

  static constexpr std::uint32_t npos_slot = 0xffffffffu;
  std::vector<indexed_file> files_;  // records; dead ones wait in free_ for reuse
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> by_name_, by_mtime_, by_session_, deleted_, reset_, temps_;
  std::uint64_t bytes_ = 0;
};

}  // namespace sessionrt::actors
