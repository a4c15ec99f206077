#include "gateway/hold_queue.hpp"

#include <algorithm>

namespace sessionrt::gateway {

void hold_queue::insert(lane& l, entry e) {
  auto at = std::upper_bound(l.waiting.begin(), l.waiting.end(), e.seq,
                             [](std::uint64_t seq, const entry& x) { return seq < x.seq; });
  l.waiting.insert(at, std::move(e));
}

void hold_queue::forget_if_empty(const std::string& key) {
  auto it = keys_.find(key);
  if (it != keys_.end() && it->second.waiting.empty() && !it->second.taken) keys_.erase(it);
}

hold_queue::admit hold_queue::hold(const std::string& key, std::uint64_t id, std::uint64_t seq, std::uint64_t conn,
                                   time_point arrived) {
  if (held_ >= limits_.max_held) return admit::full;
  entry e{id, seq, conn, key, arrived + limits_.hold};
  insert(keys_[key], std::move(e));
  ++held_;
  return admit::held;
}

std::vector<std::string> hold_queue::idle_keys() const {
  std::vector<std::string> out;
  for (const auto& [key, l] : keys_)
    if (!l.taken && !l.waiting.empty()) out.push_back(key);
  return out;
}

bool hold_queue::take(const std::string& key, entry& out) {
  auto it = keys_.find(key);
  if (it == keys_.end() || it->second.taken || it->second.waiting.empty()) return false;
  out = std::move(it->second.waiting.front());
  it->second.waiting.pop_front();
  it->second.taken = true;
  return true;
}

void hold_queue::finished(const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end() || !it->second.taken) return;
  it->second.taken = false;
  if (held_ > 0) --held_;
  forget_if_empty(key);
}

void hold_queue::put_back(entry e) {
  lane& l = keys_[e.key];
  l.taken = false;
  insert(l, std::move(e));
}

std::vector<hold_queue::entry> hold_queue::expired(time_point now) {
  return take_waiting([now](const entry& e) { return e.deadline <= now; });
}

std::vector<hold_queue::entry> hold_queue::drop_conn(std::uint64_t conn) {
  return take_waiting([conn](const entry& e) { return e.conn == conn; });
}

std::vector<hold_queue::entry> hold_queue::take_waiting(const std::function<bool(const entry&)>& leaves) {
  std::vector<entry> out;
  std::vector<std::string> emptied;
  for (auto& [key, l] : keys_) {
    auto keep = std::stable_partition(l.waiting.begin(), l.waiting.end(), [&](const entry& e) { return !leaves(e); });
    for (auto it = keep; it != l.waiting.end(); ++it) out.push_back(std::move(*it));
    l.waiting.erase(keep, l.waiting.end());
    if (l.waiting.empty() && !l.taken) emptied.push_back(key);
  }
  for (const auto& key : emptied) keys_.erase(key);
  held_ -= std::min(held_, out.size());
  std::sort(out.begin(), out.end(), [](const entry& a, const entry& b) { return a.seq < b.seq; });
  return out;
}

}  // namespace sessionrt::gateway
