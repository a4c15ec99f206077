#include "storage/transcript_index.hpp"

#include <functional>
#include <utility>

namespace sessionrt::storage {
namespace {
std::uint64_t id_hash(std::string_view id) { return std::hash<std::string_view>{}(id); }
}  // namespace

const transcript_index::id_slot* transcript_index::slot_of(std::string_view id, std::uint64_t hash) const {
  if (ids_.empty()) return nullptr;
  const std::size_t mask = ids_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    const id_slot& s = ids_[i];
    if (s.pos == kNoPosition || (s.hash == hash && at(s.pos).id == id)) return &s;
  }
}

transcript_index::id_slot* transcript_index::slot_of(std::string_view id, std::uint64_t hash) {
  return const_cast<id_slot*>(std::as_const(*this).slot_of(id, hash));
}

void transcript_index::grow_if_full() {
  if ((id_count_ + 1) * 2 <= ids_.size()) return;
  std::vector<id_slot> old(ids_.empty() ? 16 : ids_.size() * 2, id_slot{kNoPosition, 0});
  old.swap(ids_);
  const std::size_t mask = ids_.size() - 1;
  for (const id_slot& s : old) {
    if (s.pos == kNoPosition) continue;
    std::size_t i = s.hash & mask;
    while (ids_[i].pos != kNoPosition) i = (i + 1) & mask;
    ids_[i] = s;
  }
}

// Backward-shift deletion: the slots after it that probed past it move up, so no tombstone
// is left and every id stays reachable from its home slot.
void transcript_index::erase_slot(id_slot* slot) {
  const std::size_t mask = ids_.size() - 1;
  std::size_t hole = static_cast<std::size_t>(slot - ids_.data());
  for (std::size_t i = (hole + 1) & mask; ids_[i].pos != kNoPosition; i = (i + 1) & mask) {
    const std::size_t home = ids_[i].hash & mask;
    // Moves into the hole unless its home lies cyclically in (hole, i].
    const bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (stays) continue;
    ids_[hole] = ids_[i];
    hole = i;
  }
  ids_[hole] = id_slot{kNoPosition, 0};
  --id_count_;
}

std::optional<transcript_index::position> transcript_index::find(std::string_view id) const {
  const id_slot* s = slot_of(id, id_hash(id));
  if (!s || s->pos == kNoPosition) return std::nullopt;
  return s->pos;
}

transcript_index::position transcript_index::push_back(index_record r) {
  const position p = end_position();
  records_.push_back(std::move(r));
  const std::string& id = records_.back().id;
  if (!id.empty()) {  // later in the file wins
    grow_if_full();
    const std::uint64_t h = id_hash(id);
    id_slot* s = slot_of(id, h);
    if (s->pos == kNoPosition) ++id_count_;
    *s = id_slot{p, h};
  }
  return p;
}

transcript_index::position transcript_index::push_front(index_record r) {
  const position p = front_pos_ - 1;
  records_.push_front(std::move(r));
  front_pos_ = p;
  const std::string& id = records_.front().id;
  if (!id.empty()) {  // an entry later in the file already won
    grow_if_full();
    const std::uint64_t h = id_hash(id);
    id_slot* s = slot_of(id, h);
    if (s->pos == kNoPosition) {
      *s = id_slot{p, h};
      ++id_count_;
    }
  }
  return p;
}

void transcript_index::pop_back() {
  const index_record& r = records_.back();
  if (!r.id.empty())
    if (id_slot* s = slot_of(r.id, id_hash(r.id)); s && s->pos == end_position() - 1) erase_slot(s);
  records_.pop_back();
}

void transcript_index::clear() {
  records_.clear();
  std::vector<id_slot>().swap(ids_);
  id_count_ = 0;
  front_pos_ = 0;
}

}  // namespace sessionrt::storage
