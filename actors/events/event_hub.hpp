// event_hub: the subscriptions to lifecycle events, shared by every actor of one runtime.
// - subscribe/unsubscribe from any thread;
// - wants(type) is a cheap check publishers make before building an event, so an event
//   nobody subscribed to costs nothing;
// - deliver() calls the matching callbacks; only the event bus actor calls it, one event at a
//   time, so callbacks never run concurrently and see each session's events in order.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "messages/lifecycle_event.hpp"

namespace sessionrt::actors {

class event_hub {
 public:
  using callback = std::function<void(const lifecycle_event&)>;

  std::uint64_t subscribe(event_filter filter, callback fn);
  bool unsubscribe(std::uint64_t id);
  bool wants(std::string_view type) const;
  void deliver(const lifecycle_event& e) const;
  std::size_t subscriber_count() const;

 private:
  struct subscription {
    std::uint64_t id;
    event_filter filter;
    callback fn;
  };
  using list = std::vector<std::shared_ptr<const subscription>>;
  std::shared_ptr<const list> snapshot() const;

  mutable std::mutex mu_;
  std::shared_ptr<const list> subs_ = std::make_shared<const list>();
  std::uint64_t next_id_ = 1;
  std::atomic<bool> any_{false};
};

}  // namespace sessionrt::actors
