// transcript_index: where each entry of one transcript lives and how entries link, without
// their content. Records are kept in file order and addressed by a stable signed position:
// entries found by scanning backward get positions below the first one, appended entries
// positions above the last, so a position never changes once given. Duplicate ids: the
// entry later in the file wins (as pi's byId map does). Not thread-safe; one owner.
// Ids are found through an open-addressing table of (hash, position) pairs that holds no copy
// of an id (the record holds it): every append looks a fresh id up and adds it, and a long
// session indexes every entry, so the table costs no allocation per entry and 16 bytes a slot.
#pragma once
#include <climits>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "messages/transcript_entry.hpp"

namespace sessionrt::storage {

struct index_record {
  std::uint64_t offset = 0;  // byte offset of the line in the file
  std::uint32_t length = 0;  // line length without the '\n'
  entry_type type = entry_type::unknown;
  bool assistant = false;  // a message entry with role "assistant"
  bool side = false;       // appendMode "side": never the active leaf
  bool has_parent = false;
  bool has_target = false;  // leaf control with a non-null targetId
  std::string id;
  std::string parent_id;
  std::string target_id;
  // The parsed line, when it is kept in memory (migrated legacy files; recent appends).
  std::shared_ptr<const boost::json::object> parsed;
};

class transcript_index {
 public:
  using position = std::int64_t;

  bool empty() const { return records_.empty(); }
  std::size_t size() const { return records_.size(); }
  position first_position() const { return front_pos_; }
  position end_position() const { return front_pos_ + static_cast<position>(records_.size()); }

  const index_record& at(position p) const { return records_[static_cast<std::size_t>(p - front_pos_)]; }
  index_record& at(position p) { return records_[static_cast<std::size_t>(p - front_pos_)]; }
  std::optional<position> find(std::string_view id) const;

  position push_back(index_record r);   // an entry after every indexed one
  position push_front(index_record r);  // an entry before every indexed one
  void pop_back();                      // undoes a push_back (a rolled-back append)

  void clear();

 private:
  // A slot of the id table: the position of the entry that holds the id, and the id's hash
  // (compared first, so a probe rarely reads a record). pos == kNoPosition: empty.
  struct id_slot {
    position pos;
    std::uint64_t hash;
  };
  static constexpr position kNoPosition = INT64_MIN;

  id_slot* slot_of(std::string_view id, std::uint64_t hash);  // its slot, or the empty slot it would take
  const id_slot* slot_of(std::string_view id, std::uint64_t hash) const;
  void grow_if_full();
  void erase_slot(id_slot* slot);

  std::deque<index_record> records_;
  position front_pos_ = 0;
  std::vector<id_slot> ids_;  // power-of-two size (or empty), at most half full, linear probing
  std::size_t id_count_ = 0;
};

}  // namespace sessionrt::storage
