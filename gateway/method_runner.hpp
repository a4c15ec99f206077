// method_runner: runs the gateway's jobs that may block on the runtime (read and admin methods,
// /metrics, deliveries after a run), at most `limit` at once; the rest wait in a queue of at most
// `max_waiting` jobs. A flood of requests therefore costs queue entries, not threads, and a
// bounded number of them: try_post() refuses a job when the queue is full (the caller answers
// "busy"); post() always queues (the gateway's own jobs, which must not be lost).
// Fairness: every job carries a key (the connection it answers); the queue serves the keys in
// turn, first come first served within a key, so one connection's backlog delays another
// connection's call by at most one job per key ahead of it, not by the whole backlog.
// A thread is started for a job when fewer than `limit` run; it then takes the jobs waiting in
// turn and ends when none waits, so an idle gateway holds no method threads. (The runtime's
// synchronous calls no longer leave CAF state behind in the calling thread: runtime_impl.hpp's
// host_self.) Threads are joined, never detached: those that ended are joined by the next
// post(), and wait_idle() / the destructor join them all.
// post() / try_post() may be called from any thread; a job must not throw and must own what it uses.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace sessionrt::gateway {

class method_runner {
 public:
  explicit method_runner(std::size_t limit, std::size_t max_waiting = std::numeric_limits<std::size_t>::max());
  ~method_runner();  // wait_idle()
  method_runner(const method_runner&) = delete;
  method_runner& operator=(const method_runner&) = delete;

  void post(std::function<void()> job, std::uint64_t key = 0);
  // As post(), but false (and `job` untouched) when it would wait and max_waiting jobs already do.
  bool try_post(std::function<void()>& job, std::uint64_t key = 0);
  // Returns once every job posted so far has run and every thread is joined.
  void wait_idle();

  std::size_t running() const;
  std::size_t waiting() const;
  std::size_t peak_running() const;
  std::size_t peak_waiting() const;

 private:
  bool post_impl(std::function<void()>& job, std::uint64_t key, bool bounded);
  // With mu_ held: starts `job` on a new thread; false when no thread could be made.
  bool start_locked(std::function<void()>& job);
  // With mu_ held and a job waiting: the next one in turn.
  std::function<void()> pop_locked();
  void run(std::function<void()> job);
  void join_exited();

  const std::size_t limit_, max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::unordered_map<std::uint64_t, std::deque<std::function<void()>>> queues_;  // per key
  std::deque<std::uint64_t> turn_;  // the keys with jobs waiting, each once, the next to serve first
  std::size_t waiting_ = 0;
  std::size_t running_ = 0, peak_ = 0, peak_waiting_ = 0;
  std::vector<std::thread> threads_;                 // started, not yet joined
  std::vector<std::thread::id> exited_;              // whose job ended: to join
};

}  // namespace sessionrt::gateway
