#include "actors/model/model_gate.hpp"

#include <vector>

namespace sessionrt::actors {

model_gate::ticket model_gate::acquire(const std::string& provider, std::function<void()> granted) {
  admission_queue::acquired got;
  {
    std::lock_guard<std::mutex> g(mu_);
    got = queue_.acquire(provider);
    if (!got.admitted) waiting_.emplace(got.id, std::move(granted));
  }
  if (got.admitted) granted();
  return got.id;
}

void model_gate::release(ticket id) {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard<std::mutex> g(mu_);
    waiting_.erase(id);  // a waiter that gives up
    for (ticket t : queue_.release(id)) {
      auto it = waiting_.find(t);
      if (it == waiting_.end()) continue;
      run.push_back(std::move(it->second));
      waiting_.erase(it);
    }
  }
  for (auto& fn : run) fn();
}

admission_stats model_gate::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return queue_.stats();
}

}  // namespace sessionrt::actors
