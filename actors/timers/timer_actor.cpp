#include "actors/timers/timer_actor.hpp"

#include <chrono>

#include "actors/events/event_bus.hpp"
#include "actors/router/session_key.hpp"
#include "actors/timers/expiry_schedule.hpp"
#include "messages/iso_time.hpp"

namespace sessionrt::actors {
namespace {

struct timer_state {
  timer_actor_config cfg;
  expiry_schedule schedule;
  std::optional<std::int64_t> wake_at;  // a tick is scheduled for this time (real time)
};

void arm(caf::event_based_actor* self, timer_state& st) {
  if (!st.cfg.self_scheduling) return;
  auto next = st.schedule.next();
  if (!next || (st.wake_at && *st.wake_at <= *next)) return;
  st.wake_at = *next;
  const std::int64_t delay = std::max<std::int64_t>(0, *next - st.cfg.time->now_ms());
  self->delayed_send(self, std::chrono::milliseconds(delay), tick_atom::value);
}

}  // namespace

caf::behavior timer_actor(caf::event_based_actor* self, timer_actor_config cfg) {
  auto st = std::make_shared<timer_state>();
  st->cfg = std::move(cfg);
  return {
      [self, st](schedule_atom, const std::string& key, std::int64_t at_ms, std::string& reason) {
        st->schedule.set(key, at_ms, std::move(reason));
        arm(self, *st);
      },
      [self, st](tick_atom) {
        st->wake_at.reset();
        for (auto& due : st->schedule.due(st->cfg.time->now_ms())) {
          lifecycle_event e;
          e.type = std::string(event_types::session_expired);
          e.session_key = due.key;
          auto parsed = parse_agent_session_key(due.key);
          e.agent_id = parsed ? parsed->agent_id : st->cfg.agent_of_keys;
          e.at_ms = st->cfg.time->now_ms();
          e.data["reason"] = due.reason;
          e.data["staleAt"] = format_iso_ms(due.at_ms);
          publish(self, st->cfg.bus, *st->cfg.hub, std::move(e));
          self->send(st->cfg.router, passivate_atom::value, due.key, std::string("expired"));
        }
        arm(self, *st);
      },
      [st](stats_atom) { return st->schedule.size(); },
  };
}

}  // namespace sessionrt::actors
