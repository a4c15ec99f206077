#include "actors/events/event_hub.hpp"

namespace sessionrt::actors {

std::uint64_t event_hub::subscribe(event_filter filter, callback fn) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<list>(*subs_);
  const std::uint64_t id = next_id_++;
  next->push_back(std::make_shared<const subscription>(subscription{id, std::move(filter), std::move(fn)}));
  subs_ = std::move(next);
  any_.store(true);
  return id;
}

bool event_hub::unsubscribe(std::uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  auto next = std::make_shared<list>();
  bool found = false;
  for (const auto& s : *subs_) {
    if (s->id == id)
      found = true;
    else
      next->push_back(s);
  }
  any_.store(!next->empty());
  subs_ = std::move(next);
  return found;
}

std::shared_ptr<const event_hub::list> event_hub::snapshot() const {
  std::lock_guard<std::mutex> g(mu_);
  return subs_;
}

bool event_hub::wants(std::string_view type) const {
  if (!any_.load(std::memory_order_relaxed)) return false;
  for (const auto& s : *snapshot())
    if (s->filter.wants_type(type)) return true;
  return false;
}

void event_hub::deliver(const lifecycle_event& e) const {
  for (const auto& s : *snapshot())
    if (s->filter.matches(e)) s->fn(e);
}

std::size_t event_hub::subscriber_count() const { return snapshot()->size(); }

}  // namespace sessionrt::actors
