#include "actors/timers/timer_actor.hpp"

#include <chrono>

#include "actors/events/event_bus.hpp"
#include "messages/lifecycle_payloads.hpp"
#include "actors/router/session_key.hpp"
#include "actors/timers/expiry_schedule.hpp"
#include "messages/iso_time.hpp"

namespace sessionrt::actors {
namespace {

using self_ptr = timer_actor_type::stateful_pointer<timer_state>;

void arm(self_ptr self) {
  auto& st = self->state;
  if (!st.cfg.self_scheduling) return;
  auto next = st.schedule.next();
  if (!next || (st.wake_at && *st.wake_at <= *next)) return;
  st.wake_at = *next;
  const std::int64_t delay = std::max<std::int64_t>(0, *next - st.cfg.time->now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), tick_atom::value);
}

void on_schedule(self_ptr self, const std::string& key, std::int64_t at_ms, std::string reason) {
  self->state.schedule.set(key, at_ms, std::move(reason));
  arm(self);
}

// Publishes session.expired for each due key and asks the router to passivate it.
void on_tick(self_ptr self) {
  auto& st = self->state;
  st.wake_at.reset();
  for (auto& due : st.schedule.due(st.cfg.time->now_ms())) {
    auto parsed = parse_agent_session_key(due.key);
    payloads::event_subject who{due.key, parsed ? parsed->agent_id : st.cfg.agent_of_keys, ""};
    publish(self, st.cfg.bus, *st.cfg.hub,
            payloads::make_event(std::move(who), st.cfg.time->now_ms(),
                                 payloads::session_expired{due.reason, format_iso_ms(due.at_ms)}));
    if (st.cfg.router)
      self->send(st.cfg.router, passivate_atom::value, due.key, std::string("expired"));
  }
  arm(self);
}

}  // namespace

timer_actor_type::behavior_type timer_actor(self_ptr self, timer_actor_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      [self](spawned_atom, passivate_port& router) { self->state.cfg.router = std::move(router); },
      [self](schedule_atom, const std::string& key, std::int64_t at_ms, std::string& reason) {
        on_schedule(self, key, at_ms, std::move(reason));
      },
      [self](tick_atom) { on_tick(self); },
      [self](stats_atom) { return self->state.schedule.size(); },
  };
}

}  // namespace sessionrt::actors
