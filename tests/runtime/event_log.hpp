// The lifecycle events a test's runtime publishes, recorded from whichever thread delivers them.
// attach() subscribes to everything; the readers copy under the lock.
#pragma once
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/runtime.hpp"

namespace sessionrt::testing {

class event_log {
 public:
  void attach(runtime::runtime& rt) {
    rt.subscribe({}, [this](const lifecycle_event& e) {
      std::lock_guard<std::mutex> g(mu_);
      events_.push_back(e);
    });
  }
  std::vector<lifecycle_event> of(std::string_view type) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<lifecycle_event> out;
    for (const auto& e : events_)
      if (e.type == type) out.push_back(e);
    return out;
  }
  std::vector<std::string> types() {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<std::string> out;
    for (const auto& e : events_) out.push_back(e.type);
    return out;
  }
  void clear() {
    std::lock_guard<std::mutex> g(mu_);
    events_.clear();
  }

 private:
  std::mutex mu_;
  std::vector<lifecycle_event> events_;
};

}  // namespace sessionrt::testing
