#include "storage/context_counts.hpp"

namespace sessionrt::storage {

std::optional<std::int64_t> context_counts::file::total_at(std::string_view id, std::uint64_t offset) const {
  std::lock_guard lock(mu_);
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end() || it->second.offset != offset) return std::nullopt;
  return it->second.total;
}

void context_counts::file::remember(
    const std::vector<std::pair<std::string, std::pair<std::uint64_t, std::int64_t>>>& counts) {
  std::lock_guard lock(mu_);
  for (const auto& [id, at] : counts) {
    auto [it, fresh] = by_id_.insert_or_assign(id, known{at.first, at.second});
    (void)it;
    if (fresh) order_.push_back(id);
  }
  while (by_id_.size() > kMaxPerFile) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
}

std::size_t context_counts::file::size() const {
  std::lock_guard lock(mu_);
  return by_id_.size();
}

std::shared_ptr<context_counts::file> context_counts::of(const file_id& id, std::uint64_t data_end) {
  std::shared_ptr<file> f;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_path_.find(id.path); it != by_path_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      f = it->second->second;
    } else {
      f = std::make_shared<file>();
      f->dev_ = id.dev;
      f->ino_ = id.ino;
      lru_.emplace_front(id.path, f);
      by_path_[id.path] = lru_.begin();
      while (lru_.size() > kMaxFiles) {
        by_path_.erase(lru_.back().first);
        lru_.pop_back();
      }
    }
  }
  std::lock_guard lock(f->mu_);
  if (f->dev_ != id.dev || f->ino_ != id.ino || data_end < f->end_) {  // another file, or cut short
    f->by_id_.clear();
    f->order_.clear();
    f->dev_ = id.dev;
    f->ino_ = id.ino;
  }
  f->end_ = data_end;
  return f;
}

std::size_t context_counts::files() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace sessionrt::storage
