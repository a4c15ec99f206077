// pending_outcomes: the host callbacks waiting for their turn's outcome, by request id. A host
// thread adds a callback and sends only the id with its event (no std::function crosses an
// actor's mailbox); the outcome relay takes the callback back when the outcome arrives and
// calls it. Thread-safe. take() of an unknown id returns an empty function (already answered).
// cancel_all() answers whatever is left (the runtime stopped), so every send is answered once.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "messages/chat_event.hpp"

namespace sessionrt::actors {

class pending_outcomes {
 public:
  using callback = std::function<void(turn_outcome)>;

  std::uint64_t add(callback fn) {
    std::lock_guard<std::mutex> g(m_);
    const std::uint64_t id = next_++;
    by_id_.emplace(id, std::move(fn));
    return id;
  }
  callback take(std::uint64_t id) {
    std::lock_guard<std::mutex> g(m_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return {};
    callback fn = std::move(it->second);
    by_id_.erase(it);
    return fn;
  }
  // Answers every callback still waiting with `why` (outside the lock).
  void cancel_all(const status& why) {
    std::unordered_map<std::uint64_t, callback> left;
    {
      std::lock_guard<std::mutex> g(m_);
      left.swap(by_id_);
    }
    for (auto& [id, fn] : left) {
      turn_outcome out;
      out.st = why;
      fn(std::move(out));
    }
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> g(m_);
    return by_id_.size();
  }

 private:
  mutable std::mutex m_;
  std::unordered_map<std::uint64_t, callback> by_id_;
  std::uint64_t next_ = 1;
};

}  // namespace sessionrt::actors
