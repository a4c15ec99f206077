#include "actors/timers/expiry_schedule.hpp"

namespace sessionrt::actors {

void expiry_schedule::set(const std::string& key, std::int64_t at_ms, std::string reason) {
  if (at_ms < 0) {
    current_.erase(key);
    return;
  }
  auto it = current_.find(key);
  if (it != current_.end() && it->second.at_ms == at_ms) {
    it->second.reason = std::move(reason);
    return;
  }
  current_[key] = slot{at_ms, std::move(reason)};
  heap_.emplace(at_ms, key);
}

void expiry_schedule::drop_stale_top() {
  while (!heap_.empty()) {
    auto it = current_.find(heap_.top().second);
    if (it != current_.end() && it->second.at_ms == heap_.top().first) return;
    heap_.pop();
  }
}

std::vector<expiry_schedule::item> expiry_schedule::due(std::int64_t now_ms) {
  std::vector<item> out;
  for (drop_stale_top(); !heap_.empty() && heap_.top().first <= now_ms; drop_stale_top()) {
    auto [at, key] = heap_.top();
    heap_.pop();
    auto it = current_.find(key);
    out.push_back({key, at, std::move(it->second.reason)});
    current_.erase(it);
  }
  return out;
}

std::optional<std::int64_t> expiry_schedule::next() const {
  auto& self = const_cast<expiry_schedule&>(*this);
  self.drop_stale_top();
  if (heap_.empty()) return std::nullopt;
  return heap_.top().first;
}

}  // namespace sessionrt::actors
