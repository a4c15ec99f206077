// blocking_work: where the actors hand work that blocks (a compaction provider's summarize())
// so that it never runs on a scheduler thread. The runtime implements it with a pool of
// threads of its own (runtime/blocking_pool.hpp); actors only post and never wait. A job must
// own what it uses and send its answer as a message; it may be dropped when the runtime stops.
#pragma once
#include <functional>

namespace sessionrt::actors {

class blocking_work {
 public:
  virtual ~blocking_work() = default;
  virtual void post(std::function<void()> job) = 0;
};

}  // namespace sessionrt::actors
