// model_gate: the runtime-wide bound on model calls in flight (admission_queue behind a
// mutex), shared by every session. acquire() calls `granted` exactly once: before it returns
// when there is room, else later on the thread whose release() made room. The callback must
// be short (send a message). Every acquire must be matched by one release, whether the call
// ran, failed, was cancelled or never got its turn.
#pragma once
#include <functional>
#include <mutex>
#include <unordered_map>

#include "actors/model/admission_queue.hpp"

namespace sessionrt::actors {

class model_gate {
 public:
  using ticket = admission_queue::ticket;
  model_gate(std::size_t max_total, std::map<std::string, std::size_t> per_provider)
      : queue_(max_total, std::move(per_provider)) {}

  ticket acquire(const std::string& provider, std::function<void()> granted);
  void release(ticket id);
  admission_stats stats() const;

 private:
  mutable std::mutex mu_;
  admission_queue queue_;
  std::unordered_map<ticket, std::function<void()>> waiting_;
};

}  // namespace sessionrt::actors
