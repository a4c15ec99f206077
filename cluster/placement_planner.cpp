#include "cluster/placement_planner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace sessionrt::cluster {

int placement_planner::max_moves(int shards) const {
  return std::max(1, static_cast<int>(std::floor(fraction_ * shards + 1e-9)));
}

placement_plan placement_planner::plan(const std::vector<std::string>& owners, const std::vector<node_view>& nodes) const {
  placement_plan out;
  out.owners = owners;
  std::set<std::string> live, draining;
  for (const auto& n : nodes) {
    live.insert(n.id);
    if (n.draining) draining.insert(n.id);
  }
  std::vector<std::string> active;  // sorted, unique
  for (const auto& id : live)
    if (!draining.count(id)) active.push_back(id);
  if (active.empty()) return out;

  const int n = static_cast<int>(owners.size());
  const int k = static_cast<int>(active.size());
  std::map<std::string, int> count;
  for (const auto& id : active) count[id] = 0;
  for (const auto& o : owners)
    if (count.count(o)) ++count[o];

  // Targets: floor(n/k) each, +1 for the n%k nodes that hold the most now (then by id).
  std::vector<std::string> by_load = active;
  std::stable_sort(by_load.begin(), by_load.end(), [&](const auto& a, const auto& b) { return count[a] > count[b]; });
  std::map<std::string, int> target;
  for (int i = 0; i < k; ++i) target[by_load[i]] = n / k + (i < n % k ? 1 : 0);

  // The active node furthest below its target (smallest id on a tie); "" when none is below.
  auto neediest = [&]() -> std::string {
    std::string best;
    int best_gap = 0;
    for (const auto& id : active) {
      const int gap = target[id] - count[id];
      if (gap > best_gap) best = id, best_gap = gap;
    }
    return best;
  };

  std::vector<bool> changed(owners.size(), false);
  for (int i = 0; i < n; ++i) {
    if (live.count(owners[i])) continue;
    const std::string to = neediest();
    if (to.empty()) break;  // cannot happen: the gaps add up to at least the orphans
    out.assignments.push_back({i, owners[i].empty() ? std::string() : owners[i], to});
    out.owners[i] = to;
    ++count[to];
    changed[i] = true;
  }

  // Donors in order: every shard of a draining node, then the surplus of nodes above target
  // (the fullest node first).
  std::vector<int> donors;
  for (int i = 0; i < n; ++i)
    if (draining.count(owners[i])) donors.push_back(i);
  std::vector<std::string> over = active;
  std::stable_sort(over.begin(), over.end(),
                   [&](const auto& a, const auto& b) { return count[a] - target[a] > count[b] - target[b]; });
  for (const auto& id : over) {
    int surplus = count[id] - target[id];
    for (int i = 0; i < n && surplus > 0; ++i)
      if (!changed[i] && owners[i] == id) donors.push_back(i), --surplus;
  }

  const int budget = max_moves(n);
  for (int i : donors) {
    if (static_cast<int>(out.moves.size()) >= budget) break;
    const std::string to = neediest();
    if (to.empty()) break;
    const std::string from = owners[i];
    out.moves.push_back({i, from, to});
    out.owners[i] = to;
    ++count[to];
    if (count.count(from)) --count[from];
    changed[i] = true;
  }

  out.complete = true;
  for (const auto& o : out.owners)
    if (!count.count(o)) out.complete = false;  // still on a draining node (or nowhere)
  for (const auto& id : active)
    if (count[id] != target[id]) out.complete = false;
  return out;
}

}  // namespace sessionrt::cluster
