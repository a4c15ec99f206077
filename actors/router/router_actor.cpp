#include "actors/router/router_actor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
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
// is refused (the runtime stops before the key got an actor: ok; the row cannot be read:
// io_error; its shard is not served here: not_owner), so its caller learns why. Local to the
// router: never sent.
struct router_state;
using router_self = router_actor_type::stateful_pointer<router_state>;
using deliver_fn = std::function<void(router_self, const session_actor_type&, const status& refused)>;
using slot_table = session_slots<session_actor_type, deliver_fn>;

// Routes depend only on an event's routing fields and the routing config, which is fixed for
// the runtime's life: memoized while their session has a slot (a passivated session keeps no
// route), up to kRouteCacheSize distinct inputs (then started afresh).
constexpr std::size_t kRouteCacheSize = 65536;
// Routes remembered per session for dropping with it (dmScope main sends every sender to one
// session: past this many, further routes stay until the cache starts afresh).
constexpr std::size_t kRoutesPerSession = 16;

// A shard being closed (shclose): its keys are held until none has an actor.
struct closing_shard {
  std::set<std::string> pending;  // keys that still have an actor (or are getting one)
  std::set<std::string> held;     // every key held for the close (released, dropping, at the end)
  caf::response_promise rp;
};

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
  // Sharded (cfg.shard_of set): the opened shards by unit name, the shards being opened (what
  // arrived for them, to run again in order once they are open) and those being closed.
  std::map<std::string, shard_unit> units;
  std::map<std::string, std::vector<std::function<void()>>> opening;
  std::map<std::string, closing_shard> closing;
};
using state_ptr = router_state*;

std::int64_t now_ms(const router_state& st) { return st.cfg.core.time->now_ms(); }

void refuse(router_self self, std::vector<deliver_fn> events, const status& why = status()) {
  for (auto& fn : events) fn(self, session_actor_type(), why);
}

status not_owner(const std::string& unit, const std::string& key) {
  return status(errc::not_owner, fmt::format("shard {} (session {}) is not served by this node: another node owns it, "
                                             "or it is moving", unit, key));
}

void activate(router_self self, state_ptr st, const std::string& key);
void answer_hold_waiters(router_state& st, const std::string& key);
void passivate_if_idle(router_self self, const state_ptr& st, const std::string& key, const session_actor_type& actor,
                       const std::string& why);
void deliver_if_quiet(router_state& st);
void note_actorless(router_self self, const state_ptr& st, const std::string& key);

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
  if (const session_actor_type* a = st->slots.arrive(key, agent, fn, now_ms(*st), plan)) fn(self, *a, status());
  carry_out(self, st, plan);
}

// The store a slot's sessions use: its agent's, or (sharded) its shard's.
store_actor_type store_of(const router_state& st, const std::string& unit) {
  if (st.cfg.shard_of) return st.units.at(unit).store;
  return st.cfg.agents.store.at(unit);
}

// `unit` is a slot's agent: the agent id, or (sharded) the shard's unit name.
std::shared_ptr<const session_actor_deps> deps_of(router_state& st, const std::string& unit) {
  auto& shared = st.agent_deps[unit];
  if (shared) return shared;
  auto core = std::make_shared<session_core_deps>(st.cfg.core);
  auto deps = std::make_shared<session_actor_deps>();
  if (st.cfg.shard_of) {
    const shard_unit& u = st.units.at(unit);
    core->agent_id = u.agent;
    core->sessions_dir = u.sessions_dir;
    core->files = u.files;
    deps->store = u.store;
    deps->commit_log = u.commit_log;
  } else {
    core->agent_id = unit;
    core->sessions_dir = st.cfg.agents.sessions_dir.at(unit);
    deps->store = st.cfg.agents.store.at(unit);
    deps->commit_log = st.cfg.commit_log;
  }
  core->wants_event = [hub = st.cfg.hub](std::string_view type) { return hub->wants(type); };
  core->verified = std::make_shared<storage::verified_transcripts>();
  deps->core = std::move(core);
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
    refuse(self, st->slots.activation_failed(key, plan),
           status(errc::io_error, "the session row cannot be read: " + row.error));
    answer_hold_waiters(*st, key);
    note_actorless(self, st, key);
  } else {
    auto actor = spawn_session_actor(self->system(), key, std::move(row), deps_of(*st, s->agent));
    for (auto& fn : st->slots.activated(key, actor, now_ms(*st), plan)) fn(self, actor, status());
  }
  carry_out(self, st, plan);  // after the waiting events: a "stop" passivation comes behind them
}

void on_row_failed(router_self self, const state_ptr& st, const std::string& key, const caf::error& err) {
  slot_plan plan;
  refuse(self, st->slots.activation_failed(key, plan),
         status(errc::io_error, "reading the session row failed: " + self->system().render(err)));
  carry_out(self, st, plan);
  answer_hold_waiters(*st, key);
  note_actorless(self, st, key);
}

void activate(router_self self, state_ptr st, const std::string& key) {
  slot_table::slot* s = st->slots.find(key);
  if (!s) return;
  if (st->cfg.shard_of && !st->units.count(s->agent)) {  // its shard left while the key was held
    slot_plan plan;
    refuse(self, st->slots.activation_failed(key, plan), not_owner(s->agent, key));
    carry_out(self, st, plan);
    return answer_hold_waiters(*st, key);
  }
  auto store = store_of(*st, s->agent);
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
            for (auto& fn : st->slots.declined(key, now_ms(*st), again)) fn(self, actor, status());
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
  note_actorless(self, st, key);
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

// A refused event's outcome: ok means the runtime stopped before the key got an actor.
turn_outcome refused_outcome(const status& why, const std::string& key) {
  if (why.ok()) return failed_outcome(status(errc::cancelled, "the runtime stopped before this session could start"));
  return failed_outcome(why, why.code() == errc::not_owner ? key : std::string());
}

// ---- Sessions served per shard (router_config::shard_of).

std::string unit_of(const router_state& st, const std::string& key, const std::string& agent) {
  return shard_unit_name(agent, st.cfg.shard_of(key));
}

enum class shard_gate { go, waits, refused };

// Whether `key` may go on to its shard `unit`'s session now: the shard serves here (go; a key
// of a shard being closed is held first, so it waits in its slot and is refused at the end), is
// being opened (waits: the caller files the event in st.opening[unit], run again once the
// shard opened or failed), or is not served (refused).
shard_gate serve_shard(router_self self, const state_ptr& st, const std::string& key, const std::string& unit) {
  if (st->opening.count(unit)) return shard_gate::waits;
  if (!st->units.count(unit)) return shard_gate::refused;
  if (auto c = st->closing.find(unit); c != st->closing.end() && c->second.held.insert(key).second) {
    slot_plan plan;
    st->slots.hold(key, plan);
    carry_out(self, st, plan);
  }
  return shard_gate::go;
}

// What waited for a shard's open runs again, in arrival order (served now, or refused).
void run_waiting(router_state& st, const std::string& unit) {
  auto o = st.opening.find(unit);
  if (o == st.opening.end()) return;
  auto waiting = std::move(o->second);
  st.opening.erase(o);
  for (auto& fn : waiting) fn();
}

// False when the shard is still being closed (the caller waits for the close first).
bool on_shard_opened(const state_ptr& st, shard_unit u) {
  const std::string unit = shard_unit_name(u.agent, u.index);
  if (st->closing.count(unit)) return false;
  st->agent_deps.erase(unit);
  st->units[unit] = std::move(u);
  run_waiting(*st, unit);
  return true;
}

// The close is done once no key of the shard has an actor: the shard goes, and what waited
// for its keys meanwhile is refused (not_owner), in arrival order.
void finish_close(router_self self, const state_ptr& st, const std::string& unit) {
  auto c = st->closing.find(unit);
  if (c == st->closing.end() || !c->second.pending.empty()) return;
  closing_shard done = std::move(c->second);
  st->closing.erase(c);
  st->units.erase(unit);
  st->agent_deps.erase(unit);
  slot_plan plan;
  for (const auto& key : done.held) refuse(self, st->slots.release_dropping(key, plan), not_owner(unit, key));
  carry_out(self, st, plan);
  if (done.rp.pending()) done.rp.deliver(true);
}

void note_actorless(router_self self, const state_ptr& st, const std::string& key) {
  if (st->closing.empty() || !st->slots.actorless(key)) return;
  std::vector<std::string> finished;
  for (auto& [unit, c] : st->closing)
    if (c.pending.erase(key) && c.pending.empty()) finished.push_back(unit);
  for (const auto& unit : finished) finish_close(self, st, unit);
}

caf::result<bool> close_shard(router_self self, const state_ptr& st, const std::string& agent, int index) {
  const std::string unit = shard_unit_name(agent, index);
  run_waiting(*st, unit);  // an open that never came: refused
  if (!st->units.count(unit) || st->slots.stopping()) return true;
  auto& c = st->closing[unit];
  auto rp = self->make_response_promise();
  c.rp = rp;
  std::vector<std::string> keys;
  st->slots.each([&](const std::string& key, slot_table::slot& s) {
    if (s.agent == unit) keys.push_back(key);
  });
  slot_plan plan;
  for (const auto& key : keys) {
    if (!c.held.insert(key).second) continue;
    if (!st->slots.hold(key, plan)) c.pending.insert(key);
  }
  carry_out(self, st, plan);
  finish_close(self, st, unit);
  return rp;
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
void on_chat(router_self self, const state_ptr& st, chat_event_ptr held, caf::response_promise rp) {
  const chat_event& ev = *held;
  if (st->slots.stopping()) return void(rp.deliver(failed_outcome(status(errc::cancelled, "the runtime is stopping"))));
  if (!ev.session_key.empty() && !is_plausible_session_key(ev.session_key))
    return void(rp.deliver(failed_outcome(
        status(errc::invalid_argument, fmt::format("session key {:?} is not a valid key (at most 512 bytes of UTF-8 "
                                                   "text, no control characters, no '//' or '..' path segments)",
                                                   ev.session_key.substr(0, 80))))));
  bool fresh = false;
  const auto* cached = route_of(*st, ev, fresh);
  const route& r = cached->second;
  if (st->cfg.shard_of) {
    const std::string unit = unit_of(*st, r.session_key, r.agent_id);
    const auto served = serve_shard(self, st, r.session_key, unit);
    if (served != shard_gate::go) {
      auto out = failed_outcome(not_owner(unit, r.session_key), r.session_key);
      if (fresh) st->route_cache.erase(cached->first);  // no slot to drop it with
      if (served == shard_gate::refused) return void(rp.deliver(std::move(out)));
      st->opening[unit].push_back([self, st, held = std::move(held), rp = std::move(rp)]() mutable {
        on_chat(self, st, std::move(held), std::move(rp));
      });
      return;
    }
  } else if (!st->cfg.agents.store.count(r.agent_id)) {
    auto out = failed_outcome(status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", r.agent_id)),
                              r.session_key);
    if (fresh) st->route_cache.erase(cached->first);  // no slot to drop it with
    return void(rp.deliver(std::move(out)));
  }
  route_facts facts = facts_of(ev, r);
  ++st->turns;
  const std::string key = r.session_key;
  const std::string agent = st->cfg.shard_of ? unit_of(*st, key, r.agent_id) : r.agent_id;
  const std::string cache_key = fresh ? cached->first : std::string();
  deliver_or_wait(self, st, key, agent,
                  [held = std::move(held), facts = std::move(facts), rp = std::move(rp), key](
                      router_self, const session_actor_type& a, const status& refused) mutable {
                    if (a) return void(rp.delegate(a, chat_atom::value, std::move(held), std::move(facts)));
                    rp.deliver(refused_outcome(refused, key));
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
  if (st->cfg.shard_of) {
    const std::string unit = unit_of(*st, target->key, target->agent);
    const auto served = serve_shard(self, st, target->key, unit);
    if (served == shard_gate::refused)
      return void(rp.deliver(failed_outcome(not_owner(unit, target->key), target->key)));
    if (served == shard_gate::waits)
      return st->opening[unit].push_back([self, st, ev = std::move(ev), rp = std::move(rp)]() mutable {
        on_system(self, st, std::move(ev), std::move(rp));
      });
  } else if (!st->cfg.agents.store.count(target->agent)) {
    return void(rp.deliver(failed_outcome(
        status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", target->agent)), target->key)));
  }
  const std::string key = target->key;
  const std::string unit = st->cfg.shard_of ? unit_of(*st, key, target->agent) : target->agent;
  ev.session_key = key;  // checked: the session routes it no further
  deliver_or_wait(self, st, key, unit,
                  [ev = std::move(ev), rp = std::move(rp), key](router_self, const session_actor_type& a,
                                                               const status& refused) mutable {
                    if (a) return void(rp.delegate(a, system_atom::value, std::move(ev)));
                    rp.deliver(refused_outcome(refused, key));
                  });
}

caf::result<bool> on_stop(router_self self, const state_ptr& st) {
  // Shards being opened: what waited for them is refused (the runtime is stopping); shards
  // being closed: their sessions passivate with every other.
  std::vector<std::string> opening;
  for (auto& [unit, w] : st->opening) opening.push_back(unit);
  for (const auto& unit : opening) run_waiting(*st, unit);
  for (auto& [unit, c] : st->closing)
    if (c.rp.pending()) c.rp.deliver(true);
  st->closing.clear();
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
// settle request queues behind them; keys not yet live get it after their waiting events),
// with the sum of what they wait on (session_wait.hpp). A session known idle is counted
// without asking (session_slots' settle memo): under virtual time most live sessions are idle
// at every step, and asking each of them cost more than the turns.
caf::result<settle_report> settle(router_self self, const state_ptr& st) {
  auto rp = self->make_response_promise<settle_report>();
  auto sum = std::make_shared<settle_report>();
  auto left = std::make_shared<std::size_t>(1);
  auto done = [rp, left, sum]() mutable {
    if (--*left == 0) rp.deliver(*sum);
  };
  auto ask = [done, sum, st](router_self s, const session_actor_type& a, const std::string& key,
                            std::uint64_t ticket) mutable {
    if (!a) return done();
    // No timeout: a session answers (settle) from its mailbox, behind what came before.
    s->request(a, caf::infinite, settle_atom::value)
        .then(
            [done, sum, st, key, ticket](const session_wait& w) mutable {
              sum->add(w);
              if (w.idle()) st->slots.settled_idle(key, ticket);
              done();
            },
            [done, sum](caf::error&) mutable {
              ++sum->unanswered;
              done();
            });
  };
  st->slots.each([&](const std::string& key, slot_table::slot& slot) {
    if (slot.state == slot_phase::passivating) return (void)++sum->passivating;
    // Idle when it last answered and sent nothing since: it would answer idle again.
    if (slot_table::known_idle(slot)) return sum->add(session_wait{});
    ++*left;
    if (slot.state == slot_phase::live)
      ask(self, slot.actor, key, slot_table::settle_ticket(slot));
    else
      // Asked once its actor is live, among the events that waited: one send for them all, so
      // its answer is not memoized (no ticket matches ~0).
      slot.waiting.push_back([ask, key](router_self s, const session_actor_type& a, const status&) mutable {
        ask(s, a, key, ~std::uint64_t(0));
      });
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
        on_chat(self, st, std::make_shared<chat_event>(std::move(ev)), rp);
        return rp;
      },
      [self, st](chat_atom, chat_event_ptr& ev) -> caf::result<turn_outcome> {
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
      [st](shard_open_atom, const std::string& agent, int index) {
        const std::string unit = shard_unit_name(agent, index);
        if (!st->units.count(unit)) st->opening.try_emplace(unit);
      },
      [st](shard_open_atom, shard_unit& u) { return on_shard_opened(st, std::move(u)); },
      [st](shard_fail_atom, const std::string& agent, int index) { run_waiting(*st, shard_unit_name(agent, index)); },
      [self, st](shard_close_atom, const std::string& agent, int index) { return close_shard(self, st, agent, index); },
  };
}

}  // namespace

std::string shard_unit_name(const std::string& agent, int index) { return fmt::format("{}/{:03}", agent, index); }

router_actor_type spawn_router(caf::actor_system& sys, router_config cfg) {
  return sys.spawn(router_behavior, std::move(cfg));
}

}  // namespace sessionrt::actors
