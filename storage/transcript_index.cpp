#include "storage/transcript_index.hpp"

namespace sessionrt::storage {

std::optional<transcript_index::position> transcript_index::find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

transcript_index::position transcript_index::push_back(index_record r) {
  const position p = end_position();
  if (!r.id.empty()) by_id_[r.id] = p;  // later in the file wins
  records_.push_back(std::move(r));
  return p;
}

transcript_index::position transcript_index::push_front(index_record r) {
  const position p = front_pos_ - 1;
  if (!r.id.empty()) by_id_.try_emplace(r.id, p);  // an entry later in the file already won
  records_.push_front(std::move(r));
  front_pos_ = p;
  return p;
}

void transcript_index::pop_back() {
  const index_record& r = records_.back();
  auto it = by_id_.find(r.id);
  if (it != by_id_.end() && it->second == end_position() - 1) by_id_.erase(it);
  records_.pop_back();
}

void transcript_index::clear() {
  records_.clear();
  by_id_.clear();
  front_pos_ = 0;
}

}  // namespace sessionrt::storage
