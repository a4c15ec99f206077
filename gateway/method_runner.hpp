// method_runner: runs the gateway's jobs that may block on the runtime (read and admin methods,
// /metrics, deliveries after a run), at most `limit` at once, first come first served; the rest
// wait in a queue. A flood of requests therefore costs queue entries, not threads.
// Each job runs on a thread of its own that ends with the job: CAF 0.17's blocking actors
// (caf::scoped_actor, what the runtime's synchronous calls use) leave per-thread state behind,
// and a long-lived pooled thread would keep it past runtime::stop(), so the actor system would
// never finish. Threads are joined, never detached: those whose job ended are joined by the next
// post(), and wait_idle() / the destructor join them all.
// post() may be called from any thread; a job must not throw and must own what it uses.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sessionrt::gateway {

class method_runner {
 public:
  explicit method_runner(std::size_t limit);
  ~method_runner();  // wait_idle()
  method_runner(const method_runner&) = delete;
  method_runner& operator=(const method_runner&) = delete;

  void post(std::function<void()> job);
  // Returns once every job posted so far has run and every thread is joined.
  void wait_idle();

  std::size_t running() const;
  std::size_t waiting() const;
  std::size_t peak_running() const;

 private:
  // With mu_ held: starts `job` on a new thread; false when no thread could be made.
  bool start_locked(std::function<void()>& job);
  void run(std::function<void()> job);
  void join_exited();

  const std::size_t limit_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> waiting_;
  std::size_t running_ = 0, peak_ = 0;
  std::vector<std::thread> threads_;                 // started, not yet joined
  std::vector<std::thread::id> exited_;              // whose job ended: to join
};

}  // namespace sessionrt::gateway
