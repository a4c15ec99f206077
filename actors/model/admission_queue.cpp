#include "actors/model/admission_queue.hpp"

#include <algorithm>

namespace sessionrt::actors {

admission_queue::admission_queue(std::size_t max_total, std::map<std::string, std::size_t> per_provider)
    : max_total_(max_total), per_provider_(std::move(per_provider)) {}

bool admission_queue::has_room(const std::string& provider) const {
  if (max_total_ && running_.size() >= max_total_) return false;
  auto bound = per_provider_.find(provider);
  if (bound == per_provider_.end()) return true;
  auto n = running_by_provider_.find(provider);
  return n == running_by_provider_.end() || n->second < bound->second;
}

void admission_queue::admit(ticket id, const std::string& provider) {
  running_.emplace(id, provider);
  ++running_by_provider_[provider];
  ++stats_.admitted;
  stats_.peak_running = std::max(stats_.peak_running, running_.size());
}

admission_queue::acquired admission_queue::acquire(const std::string& provider) {
  const ticket id = next_++;
  // Nobody overtakes a waiting ticket of the same provider (FIFO per provider); another
  // provider's full bound does not block this one.
  const bool same_provider_waits = std::any_of(waiting_.begin(), waiting_.end(),
                                               [&](const auto& w) { return w.second == provider; });
  if (!same_provider_waits && has_room(provider)) {
    admit(id, provider);
    return {id, true};
  }
  waiting_.emplace_back(id, provider);
  return {id, false};
}

std::vector<admission_queue::ticket> admission_queue::release(ticket id) {
  std::vector<ticket> admitted;
  if (auto it = running_.find(id); it != running_.end()) {
    if (auto n = running_by_provider_.find(it->second); n != running_by_provider_.end() && --n->second == 0)
      running_by_provider_.erase(n);
    running_.erase(it);
  } else {
    auto w = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& x) { return x.first == id; });
    if (w != waiting_.end()) waiting_.erase(w);
    return admitted;  // a waiting ticket made no room
  }
  // Oldest first; skip tickets whose provider is still full.
  for (auto w = waiting_.begin(); w != waiting_.end();) {
    if (max_total_ && running_.size() >= max_total_) break;
    if (!has_room(w->second)) {
      ++w;
      continue;
    }
    admit(w->first, w->second);
    ++stats_.admitted_late;
    admitted.push_back(w->first);
    w = waiting_.erase(w);
  }
  return admitted;
}

bool admission_queue::running(ticket id) const { return running_.count(id) != 0; }

admission_stats admission_queue::stats() const {
  admission_stats s = stats_;
  s.running = running_.size();
  s.waiting = waiting_.size();
  return s;
}

}  // namespace sessionrt::actors
