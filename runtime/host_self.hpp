// The blocking actors a host thread's synchronous call asks the runtime's actors through.
// - host_self: one a call, ended when the call returns.
// - step_host: the one the calls a virtual-time driver makes at every step reuse (settle,
//   advance_clock, run_due_maintenance, flush: about five a step). A scoped_actor's end
//   cancels its timeouts through CAF's clock thread, a wake-up of that thread each time; the
//   simulator made ~45,000 of them a simulated day. A lease holds it for one call; a caller
//   that finds it leased (another thread, or a call made from inside one) gets a fresh
//   host_self instead, so no caller waits for another. The runtime resets it before its actor
//   system stops (an actor left alive would keep ~actor_system waiting).
#pragma once
#include <caf/all.hpp>

#include <memory>
#include <mutex>

namespace sessionrt::runtime {

// CAF 0.17's scoped_actor parks a reference to the system's logger in the calling thread's
// thread_local, and ~actor_system waits until the logger is gone: a thread that ever called the
// runtime (a host's main thread, a pooled worker) kept the system from finishing when another
// thread stopped it, forever. The runtime logs through spdlog, never CAF's logger, so the
// reference is dropped at once.
class host_self : public caf::scoped_actor {
 public:
  explicit host_self(caf::actor_system& sys) : caf::scoped_actor(sys) { caf::logger::set_current_actor_system(nullptr); }
  ~host_self() { caf::logger::set_current_actor_system(nullptr); }
  host_self(const host_self&) = delete;
  host_self& operator=(const host_self&) = delete;
};

class step_host {
 public:
  class lease {
   public:
    caf::scoped_actor& self() { return owned_ ? *owned_ : *shared_; }

   private:
    friend class step_host;
    std::unique_lock<std::mutex> lock_;
    host_self* shared_ = nullptr;
    std::unique_ptr<host_self> owned_;
  };

  // The shared actor when `reuse` and it is free (made at the first lease), else a fresh one.
  lease take(caf::actor_system& sys, bool reuse) {
    lease l;
    if (reuse) {
      l.lock_ = std::unique_lock<std::mutex>(mu_, std::try_to_lock);
      if (l.lock_.owns_lock()) {
        if (!self_) self_ = std::make_unique<host_self>(sys);
        l.shared_ = self_.get();
        return l;
      }
    }
    l.owned_ = std::make_unique<host_self>(sys);
    return l;
  }
  // Ends the shared actor; no lease may be out.
  void reset() {
    std::lock_guard<std::mutex> g(mu_);
    self_.reset();
  }

 private:
  std::mutex mu_;
  std::unique_ptr<host_self> self_;
};

}  // namespace sessionrt::runtime
