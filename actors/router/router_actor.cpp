#include "actors/router/router_actor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <unordered_map>
#include <vector>

#include "actors/router/event_routing.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"
#include "actors/router/session_slots.hpp"
#include "actors/router/system_event_check.hpp"

namespace sessionrt::actors {
namespace {

// Hands an event to its session actor; called with a null actor and the reason when the event
// is refused (the runtime stops before the key got an actor: "" ; the row cannot be read), so
// its caller learns why. Local to the router: never sent.
struct router_state;
using router_self = router_actor_type::stateful_pointer<router_state>;
using deliver_fn = std::function<void(router_self, const session_actor_type&, const std::string& refused)>;
using slot_table = session_slots<session_actor_type, deliver_fn>;

// Routes depend only on an event's routing fields and the routing config, which is fixed for
// the runtime's life: memoized while their session has a slot (a passivated session keeps no
// route), up to kRouteCacheSize distinct inputs (then started afresh).
constexpr std::size_t kRouteCacheSize = 65536;
// Routes remembered per session for dropping with it (dmScope main sends every sender to one
// session: past this many, further routes stay until the cache starts afresh).
constexpr std::size_t kRoutesPerSession = 16;

// The router actor's state (CAF constructs it empty; init() gives it the config).
struct router_state {
  void init(router_config c) {
    cfg = std::move(c);
    slots = slot_table(cfg.core.settings->session.max_live_sessions);
  }
  router_config cfg;
  // Per agent, what its session actors share (built on the agent's first activation).
  std::unordered_map<std::string, std::shared_ptr<const session_actor_deps>> agent_deps;
  std::unordered_map<std::string, route> route_cache;
  slot_table slots{1};
  caf::response_promise stop_promise;
  std::vector<caf::response_promise> quiet_waiters;  // (tick, settle): answered when nothing passivates
  // (hold, key): answered when the key has no actor.
  std::map<std::string, std::vector<caf::response_promise>> hold_waiters;
  // (hold, key, settle): answered when a hold on the key arrives.
  std::map<std::string, std::vector<caf::response_promise>> held_watchers;
  // (passivate, key, why, settle): answered when the key's passivation is done.
  std::unordered_map<std::string, std::vector<caf::response_promise>> passivation_waiters;
  std::uint64_t turns = 0;
};
using state_ptr = router_state*;

std::int64_t now_ms(const router_state& st) { return st.cfg.core.time->now_ms(); }

void refuse(router_self self, std::vector<deliver_fn> events, const std::string& why = "") {
  for (auto& fn : events) fn(self, session_actor_type(), why);
}

void activate(router_self self, state_ptr st, const std::string& key);
void answer_hold_waiters(router_state& st, const std::string& key);
void passivate_if_idle(router_self self, const state_ptr& st, const std::string& key, const session_actor_type& actor,
                       const std::string& why);
void deliver_if_quiet(router_state& st);

// Does what the slot table planned: forgets dropped routes, asks actors to passivate or trim,
// starts activations.
void carry_out(router_self self, const state_ptr& st, slot_plan& plan) {
  for (const auto& r : plan.dropped_routes) st->route_cache.erase(r);
  if (!plan.dropped_routes.empty() && st->route_cache.bucket_count() > 1024 &&
      st->route_cache.size() * 8 < st->route_cache.bucket_count())
    st->route_cache.rehash(0);
  for (const auto& p : plan.passivate)
    if (auto* s = st->slots.find(p.key)) {
      if (p.only_if_idle)
        passivate_if_idle(self, st, p.key, s->actor, p.why);
      else
        self->send(s->actor, passivate_atom::value, p.why);
    }
  for (const auto& key : plan.trim)
    if (auto* s = st->slots.find(key)) self->send(s->actor, trim_atom::value);
  for (const auto& key : plan.activate) activate(self, st, key);
}

void deliver_if_quiet(router_state& st) {
  if (st.quiet_waiters.empty() || !st.slots.quiet()) return;
  for (auto& rp : st.quiet_waiters) rp.deliver(true);
  st.quiet_waiters.clear();
}

// Hands `fn` to the key's live actor, or lets it wait in the key's slot.
void deliver_or_wait(router_self self, const state_ptr& st, const std::string& key,
                     const std::string& agent, deliver_fn fn) {
  slot_plan plan;
  if (const session_actor_type* a = st->slots.arrive(key, agent, fn, now_ms(*st), plan)) fn(self, *a, std::string());
  carry_out(self, st, plan);
}

std::shared_ptr<const session_actor_deps> deps_of(router_state& st, const std::string& agent) {
  auto& shared = st.agent_deps[agent];
  if (shared) return shared;
  auto core = std::make_shared<session_core_deps>(st.cfg.core);
  core->agent_id = agent;
  core->sessions_dir = st.cfg.agents.sessions_dir.at(agent);
  core->wants_event = [hub = st.cfg.hub](std::string_view type) { return hub->wants(type); };
  auto deps = std::make_shared<session_actor_deps>();
  deps->core = std::move(core);
  deps->store = st.cfg.agents.store.at(agent);
  deps->commit_log = st.cfg.commit_log;
  deps->bus = st.cfg.bus;
  deps->timers = st.cfg.timers;
  deps->hub = st.cfg.hub;
  deps->runner = st.cfg.runner;
  deps->gate = st.cfg.gate;
  deps->pool = st.cfg.pool;
  deps->timers_clock = st.cfg.timers_clock;
  shared = std::move(deps);
  return shared;
}

// The key's row arrived: its actor starts and takes what waited (or, when the row cannot be
// read, the key gets no actor and its events fail with the reason).
void on_row(router_self self, const state_ptr& st, const std::string& key, entry_reply& row) {
  slot_table::slot* s = st->slots.find(key);
  if (!s || s->state != slot_phase::activating) return;
  slot_plan plan;
  if (!row.error.empty()) {
    // The row exists but cannot be read (sessions.json changed under the runtime): no actor,
    // no new session over it.
    refuse(self, st->slots.activation_failed(key, plan), "the session row cannot be read: " + row.error);
    answer_hold_waiters(*st, key);
  } else {
    auto actor = spawn_session_actor(self->system(), key, std::move(row), deps_of(*st, s->agent));
    for (auto& fn : st->slots.activated(key, actor, now_ms(*st), plan)) fn(self, actor, std::string());
  }
  carry_out(self, st, plan);  // after the waiting events: a "stop" passivation comes behind them
}

void on_row_failed(router_self self, const state_ptr& st, const std::string& key, const caf::error& err) {
  slot_plan plan;
  refuse(self, st->slots.activation_failed(key, plan), "reading the session row failed: " + self->system().render(err));
  carry_out(self, st, plan);
  answer_hold_waiters(*st, key);
}

void activate(router_self self, state_ptr st, const std::string& key) {
  slot_table::slot* s = st->slots.find(key);
  if (!s) return;
  auto store = st->cfg.agents.store.at(s->agent);
  // No timeout: a store answers every request from its mailbox (a row it cannot read too).
  self->request(store, caf::infinite, get_atom::value, key)
      .then(
          [self, st, key, store](entry_reply& row) {
            if (row.found || !row.error.empty() || !is_thread_key(key)) return on_row(self, st, key, row);
            // A thread's first session forks its parent's active branch: the parent's row too.
            row.fork_parent_key = split_thread_suffix(key).base_key;
            self->request(store, caf::infinite, get_atom::value, row.fork_parent_key)
                .then(
                    [self, st, key, row](entry_reply& parent) mutable {
                      if (parent.found) row.fork_parent_row = std::move(parent.entry);
                      on_row(self, st, key, row);
                    },
                    [self, st, key, row](caf::error&) mutable { on_row(self, st, key, row); });
          },
          [self, st, key](caf::error& err) { on_row_failed(self, st, key, err); });
}

// The expiry timers' request: only if idle (under virtual time a turn that waits on the model
// must not hold the clock). A session that declines stays live; it rolls over at its next
// turn all the same.
void passivate(router_self self, const state_ptr& st, const std::string& key, const std::string& why) {
  slot_plan plan;
  st->slots.passivate(key, why, plan, true);
  carry_out(self, st, plan);
}

// The maintenance actor's request: true once `key` has no live actor (passivated now, or none
// was live or queued); false while its actor is starting (it may hold a row read before the
// request) or while it runs a turn (it declines: passivate_if_idle), so the caller leaves its
// files alone.
caf::result<bool> passivate_and_wait(router_self self, const state_ptr& st, const std::string& key,
                                     const std::string& why) {
  auto* s = st->slots.find(key);
  if (!s || s->state == slot_phase::queued || s->state == slot_phase::held) return true;
  if (s->state == slot_phase::activating) return false;
  auto rp = self->make_response_promise();
  if (s->state == slot_phase::passivating) {  // already on its way out
    st->passivation_waiters[key].push_back(rp);
    return rp;
  }
  st->passivation_waiters[key].push_back(rp);
  slot_plan plan;
  st->slots.passivate(key, why, plan, true);
  carry_out(self, st, plan);
  return rp;
}

// Asks a key the table has passivating to go if it is idle. If it declines (a turn runs), the
// key is live again with what arrived meanwhile, and whoever waited for the passivation
// learns it did not happen (false); held or stopping, the key is asked again without condition.
void passivate_if_idle(router_self self, const state_ptr& st, const std::string& key, const session_actor_type& actor,
                       const std::string& why) {
  // No timeout: the session answers at once (idle or not), from its mailbox.
  self->request(actor, caf::infinite, passivate_atom::value, why, settle_atom::value)
      .then(
          [self, st, key, actor](bool passivating) {
            if (passivating) return;  // (passivated) follows and answers the waiters
            slot_plan again;
            for (auto& fn : st->slots.declined(key, now_ms(*st), again)) fn(self, actor, std::string());
            carry_out(self, st, again);
            if (!again.passivate.empty()) return;
            if (auto it = st->passivation_waiters.find(key); it != st->passivation_waiters.end()) {
              for (auto& w : it->second) w.deliver(false);
              st->passivation_waiters.erase(it);
            }
            deliver_if_quiet(*st);
          },
          [](caf::error&) {});  // the actor is gone: as for an unconditional passivation
}

void answer_hold_waiters(router_state& st, const std::string& key) {
  auto it = st.hold_waiters.find(key);
  if (it == st.hold_waiters.end() || !st.slots.actorless(key)) return;
  for (auto& rp : it->second) rp.deliver(true);
  st.hold_waiters.erase(it);
}

caf::result<bool> hold(router_self self, const state_ptr& st, const std::string& key) {
  slot_plan plan;
  const bool actorless = st->slots.hold(key, plan);
  carry_out(self, st, plan);
  if (auto w = st->held_watchers.find(key); w != st->held_watchers.end()) {
    for (auto& rp : w->second) rp.deliver(true);
    st->held_watchers.erase(w);
  }
  if (actorless) return true;
  auto rp = self->make_response_promise();
  st->hold_waiters[key].push_back(rp);
  return rp;
}

// True once some hold on `key` arrived (at once when one is in place).
caf::result<bool> when_held(router_self self, const state_ptr& st, const std::string& key) {
  if (st->slots.held(key)) return true;
  auto rp = self->make_response_promise();
  st->held_watchers[key].push_back(rp);
  return rp;
}

void release(router_self self, const state_ptr& st, const std::string& key) {
  slot_plan plan;
  st->slots.release(key, plan);
  carry_out(self, st, plan);
}

void answer_passivation_waiters(router_state& st, const std::string& key) {
  auto it = st.passivation_waiters.find(key);
  if (it == st.passivation_waiters.end()) return;
  for (auto& rp : it->second) rp.deliver(true);
  st.passivation_waiters.erase(it);
}

void on_passivated(router_self self, const state_ptr& st, const std::string& key) {
  answer_passivation_waiters(*st, key);
  slot_plan plan;
  refuse(self, st->slots.passivated(key, plan));  // stopping: events that arrived during the passivation
  carry_out(self, st, plan);
  answer_hold_waiters(*st, key);
  if (st->slots.stopping() && st->slots.empty() && st->stop_promise.pending()) st->stop_promise.deliver(true);
  deliver_if_quiet(*st);
}

void sweep(router_self self, const state_ptr& st) {
  const auto& settings = st->cfg.core.settings->session;
  slot_plan plan;
  st->slots.sweep(now_ms(*st), settings.passivate_idle_ms, settings.trim_idle_ms, plan);
  carry_out(self, st, plan);
}

void schedule_sweep(router_self self, const router_state& st) {
  if (!st.cfg.self_scheduling) return;
  const auto& settings = st.cfg.core.settings->session;
  std::int64_t every = 60000;  // a quarter of the shortest idle time in use, 1 s to 1 min
  for (std::int64_t idle : {settings.passivate_idle_ms, settings.trim_idle_ms})
    if (idle > 0) every = std::min(every, std::max<std::int64_t>(idle / 4, 1000));
  self->delayed_send(self, std::chrono::milliseconds(every), tick_atom::value);
}

turn_outcome failed_outcome(status why, std::string key = std::string()) {
  turn_outcome out;
  out.session_key = std::move(key);
  out.st = std::move(why);
  return out;
}

// The route of `ev`, memoized (null when no configured agent takes it; `fresh` says whether
// it was just resolved).
const std::pair<const std::string, route>* route_of(router_state& st, const chat_event& ev, bool& fresh) {
  std::string cache_key = route_cache_key(ev);
  auto cached = st.route_cache.find(cache_key);
  fresh = cached == st.route_cache.end();
  if (fresh) {
    route r = resolve_route(route_input_of(ev), st.cfg.core.settings->routing);
    if (st.route_cache.size() >= kRouteCacheSize) {
      st.route_cache.clear();
      st.slots.clear_routes();
    }
    cached = st.route_cache.emplace(std::move(cache_key), std::move(r)).first;
  }
  return &*cached;
}

// A chat event: answered through `rp` by its session actor (delegated), or here when it is
// refused.
void on_chat(router_self self, const state_ptr& st, chat_event ev, caf::response_promise rp) {
  if (st->slots.stopping()) return void(rp.deliver(failed_outcome(status(errc::cancelled, "the runtime is stopping"))));
  if (!ev.session_key.empty() && !is_plausible_session_key(ev.session_key))
    return void(rp.deliver(failed_outcome(
        status(errc::invalid_argument, fmt::format("session key {:?} is not a valid key (at most 512 bytes of UTF-8 "
                                                   "text, no control characters, no '//' or '..' path segments)",
                                                   ev.session_key.substr(0, 80))))));
  bool fresh = false;
  const auto* cached = route_of(*st, ev, fresh);
  const route& r = cached->second;
  if (!st->cfg.agents.store.count(r.agent_id)) {
    auto out = failed_outcome(status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", r.agent_id)),
                              r.session_key);
    if (fresh) st->route_cache.erase(cached->first);  // no slot to drop it with
    return void(rp.deliver(std::move(out)));
  }
  route_facts facts = facts_of(ev, r);
  ++st->turns;
  const std::string key = r.session_key, agent = r.agent_id;
  const std::string cache_key = fresh ? cached->first : std::string();
  deliver_or_wait(self, st, key, agent,
                  [ev = std::move(ev), facts = std::move(facts), rp = std::move(rp)](
                      router_self, const session_actor_type& a, const std::string& refused) mutable {
                    if (a) return void(rp.delegate(a, chat_atom::value, std::move(ev), std::move(facts)));
                    rp.deliver(failed_outcome(refused.empty() ? status(errc::cancelled, "the runtime stopped before "
                                                                                        "this session could start")
                                                              : status(errc::io_error, refused)));
                  });
  // The slot exists now (deliver_or_wait made it); the route goes with it.
  if (fresh) st->slots.add_route(key, cache_key, kRoutesPerSession);
}

// A system event: checked like a chat event, then answered by its session actor (delegated).
void on_system(router_self self, const state_ptr& st, system_event ev, caf::response_promise rp) {
  if (st->slots.stopping()) return void(rp.deliver(failed_outcome(status(errc::cancelled, "the runtime is stopping"))));
  const auto& settings = *st->cfg.core.settings;
  auto target = check_system_event(ev, settings.routing, settings.session.max_message_bytes,
                                   settings.heartbeat_isolated_session);
  if (!target.ok()) return void(rp.deliver(failed_outcome(target.error(), ev.session_key)));
  if (!st->cfg.agents.store.count(target->agent))
    return void(rp.deliver(failed_outcome(
        status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", target->agent)), target->key)));
  ev.session_key = target->key;  // checked: the session routes it no further
  deliver_or_wait(self, st, target->key, target->agent,
                  [ev = std::move(ev), rp = std::move(rp)](router_self, const session_actor_type& a,
                                                          const std::string& refused) mutable {
                    if (a) return void(rp.delegate(a, system_atom::value, std::move(ev)));
                    rp.deliver(failed_outcome(refused.empty() ? status(errc::cancelled, "the runtime stopped before "
                                                                                        "this session could start")
                                                              : status(errc::io_error, refused)));
                  });
}

caf::result<bool> on_stop(router_self self, const state_ptr& st) {
  slot_plan plan;
  refuse(self, st->slots.stop(plan));  // queued keys never got an actor
  carry_out(self, st, plan);
  if (st->slots.empty()) return true;
  st->stop_promise = self->make_response_promise();
  return st->stop_promise;
}

// Virtual time: sweeps, then answers once nothing passivates.
caf::result<bool> on_tick_settle(router_self self, const state_ptr& st) {
  sweep(self, st);
  st->quiet_waiters.push_back(self->make_response_promise());
  auto rp = st->quiet_waiters.back();
  deliver_if_quiet(*st);
  return rp;
}

// Answers once every session that exists now has handled what was sent to it before (a
// settle request queues behind them; keys not yet live get it after their waiting events).
caf::result<bool> settle(router_self self, const state_ptr& st) {
  auto rp = self->make_response_promise();
  auto left = std::make_shared<std::size_t>(1);
  auto done = [rp, left]() mutable {
    if (--*left == 0) rp.deliver(true);
  };
  auto ask = [done](router_self s, const session_actor_type& a, const std::string&) mutable {
    if (!a) return done();
    // No timeout: a session answers (settle) from its mailbox, behind what came before.
    s->request(a, caf::infinite, settle_atom::value).then([done](bool) mutable { done(); },
                                                           [done](caf::error&) mutable { done(); });
  };
  st->slots.each([&](const std::string&, slot_table::slot& slot) {
    if (slot.state == slot_phase::passivating) return;
    ++*left;
    if (slot.state == slot_phase::live)
      ask(self, slot.actor, std::string());
    else
      slot.waiting.push_back(ask);
  });
  done();
  return rp;
}

router_stats stats_of(const router_state& st) {
  return router_stats{st.slots.counts(), st.turns, st.route_cache.size()};
}

router_actor_type::behavior_type router_behavior(router_self self, router_config cfg) {
  state_ptr st = &self->state;
  st->init(std::move(cfg));
  schedule_sweep(self, *st);
  return {
      [self, st](chat_atom, chat_event& ev) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise();
        on_chat(self, st, std::move(ev), rp);
        return rp;
      },
      [self, st](system_atom, system_event& ev) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise();
        on_system(self, st, std::move(ev), rp);
        return rp;
      },
      [self, st](passivate_atom, const std::string& key, const std::string& why) { passivate(self, st, key, why); },
      [self, st](passivated_atom, const std::string& key) { on_passivated(self, st, key); },
      [self, st](passivate_atom, const std::string& key, const std::string& why, settle_atom) {
        return passivate_and_wait(self, st, key, why);
      },
      [self, st](hold_atom, const std::string& key) { return hold(self, st, key); },
      [self, st](hold_atom, const std::string& key, settle_atom) { return when_held(self, st, key); },
      [self, st](release_atom, const std::string& key) { release(self, st, key); },
      [self, st](tick_atom) {
        sweep(self, st);
        schedule_sweep(self, *st);
      },
      [self, st](tick_atom, settle_atom) { return on_tick_settle(self, st); },
      [self, st](stop_atom) { return on_stop(self, st); },
      [self, st](settle_atom) { return settle(self, st); },
      [st](stats_atom) { return stats_of(*st); },
  };
}

}  // namespace

router_actor_type spawn_router(caf::actor_system& sys, router_config cfg) {
  return sys.spawn(router_behavior, std::move(cfg));
}

}  // namespace sessionrt::actors
