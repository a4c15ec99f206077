#include "gateway/session_watchers.hpp"

#include <algorithm>

namespace sessionrt::gateway {

void session_watchers::add(const std::string& key, std::uint64_t conn) {
  auto& v = by_key_[key];
  if (std::find(v.begin(), v.end(), conn) == v.end()) v.push_back(conn);
}

void session_watchers::remove(const std::string& key, std::uint64_t conn) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  auto& v = it->second;
  v.erase(std::remove(v.begin(), v.end(), conn), v.end());
  if (v.empty()) by_key_.erase(it);  // a key nobody watches any more costs nothing
}

const std::vector<std::uint64_t>& session_watchers::of(const std::string& key) const {
  static const std::vector<std::uint64_t> none;
  auto it = by_key_.find(key);
  return it == by_key_.end() ? none : it->second;
}

}  // namespace sessionrt::gateway
