// blocking_pool: a fixed number of threads for work that blocks (a synchronous model runner,
// a compaction provider's summarize()), so that it never holds one of the actor scheduler's
// threads. Jobs run first come, first served; a job must not throw, and must own what it uses
// (capture by value / shared_ptr): the destructor drops the jobs still waiting and does not
// wait for the ones running (a runner may be stuck in a network call) — their threads end
// when their job returns.
// CAF 0.17 offers detached actors (one thread each) but no shared pool for blocking calls;
// dealing jobs round-robin to N detached actors would queue a call behind a slow one while
// other threads idle.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "actors/model/blocking_work.hpp"

namespace sessionrt::runtime {

class blocking_pool final : public actors::blocking_work {
 public:
  explicit blocking_pool(std::size_t threads);
  ~blocking_pool() override;
  blocking_pool(const blocking_pool&) = delete;
  blocking_pool& operator=(const blocking_pool&) = delete;

  void post(std::function<void()> job) override;
  std::size_t threads() const { return threads_; }
  std::size_t waiting() const;

 private:
  struct shared;
  std::shared_ptr<shared> state_;
  std::size_t threads_;
};

}  // namespace sessionrt::runtime
