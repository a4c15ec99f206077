#include "storage/verified_transcripts.hpp"

#include <functional>

namespace sessionrt::storage {

std::uint64_t verified_transcripts::key(std::string_view path) { return std::hash<std::string_view>{}(path); }

void verified_transcripts::note(std::string_view path, const file_info& info) {
  const std::uint64_t k = key(path);
  std::lock_guard<std::mutex> g(mu_);
  old_.erase(k);
  if (young_.size() >= half_ && !young_.contains(k)) {
    old_ = std::move(young_);
    young_ = {};
  }
  young_[k] = of(info);
}

bool verified_transcripts::take(std::string_view path, const file_info& now) {
  const std::uint64_t k = key(path);
  std::lock_guard<std::mutex> g(mu_);
  for (auto* gen : {&young_, &old_}) {
    auto it = gen->find(k);
    if (it == gen->end()) continue;
    const bool same = it->second == of(now);
    gen->erase(it);
    return same;
  }
  return false;
}

std::size_t verified_transcripts::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return young_.size() + old_.size();
}

}  // namespace sessionrt::storage
