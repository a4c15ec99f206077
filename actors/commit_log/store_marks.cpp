#include "actors/commit_log/store_marks.hpp"

#include <algorithm>

namespace sessionrt::actors {

void store_marks::session_row(std::uint64_t log, const std::string& agent, std::uint64_t seq) {
  auto& top = pending_[log][agent];
  top = std::max(top, seq);
}

void store_marks::store_change(std::uint64_t log, const std::string& agent) { pending_[log].emplace(agent, 0); }

void store_marks::written(const std::string& agent, std::uint64_t order) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto& agents = it->second;
    if (auto a = agents.find(agent); a != agents.end() && a->second <= order) agents.erase(a);
    it = agents.empty() ? pending_.erase(it) : std::next(it);
  }
}

bool store_marks::held(std::uint64_t log) const { return pending_.count(log) > 0; }

std::vector<std::string> store_marks::holders_below(std::uint64_t log) const {
  std::vector<std::string> out;
  for (const auto& [n, agents] : pending_) {
    if (n >= log) break;
    for (const auto& [agent, top] : agents)
      if (std::find(out.begin(), out.end(), agent) == out.end()) out.push_back(agent);
  }
  return out;
}

}  // namespace sessionrt::actors
