#include "actors/router/router_actor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

#include "actors/router/event_routing.hpp"
#include "actors/router/route_resolver.hpp"
#include "actors/router/session_key.hpp"

namespace sessionrt::actors {
namespace {

// Hands an event to its session actor; called with a null actor and the reason when the event
// is refused (the runtime stops before the key got an actor: "" ; the row cannot be read), so
// its caller learns why.
using deliver_fn = std::function<void(caf::event_based_actor*, const caf::actor&, const std::string& refused)>;

struct key_slot {
  // queued: waits for a free slot (session.maxLiveSessions counts activating, live and
  // passivating actors: each may hold a transcript open).
  enum class phase { queued, activating, live, passivating } state = phase::activating;
  caf::actor actor;
  std::string agent;
  std::vector<deliver_fn> waiting;  // events that arrived while not live, in order
  std::int64_t last_active_ms = 0;
  bool trimmed = false;  // asked to trim since its last event (session.trimIdleMs)
  std::list<std::string>::iterator lru;  // position in router_state::lru while live
  std::vector<std::string> routes;  // route_cache keys that resolved to this key (dropped with it)
};

// Routes depend only on an event's routing fields and the routing config, which is fixed for
// the runtime's life: memoized while their session has a slot (a passivated session keeps no
// route), up to kRouteCacheSize distinct inputs (then started afresh).
constexpr std::size_t kRouteCacheSize = 65536;
// Routes remembered per session for dropping with it (dmScope main sends every sender to one
// session: past this many, further routes stay until the cache starts afresh).
constexpr std::size_t kRoutesPerSession = 16;

struct router_state {
  router_config cfg;
  // Per agent, what its session actors share (built on the agent's first activation).
  std::unordered_map<std::string, std::shared_ptr<const session_actor_deps>> agent_deps;
  std::unordered_map<std::string, route> route_cache;
  std::unordered_map<std::string, key_slot> slots;
  std::list<std::string> lru;  // live keys, most recently active first
  std::deque<std::string> admission;  // queued keys, in arrival order
  std::size_t open = 0;               // slots activating, live or passivating
  std::size_t passivating = 0;        // slots passivating
  std::size_t live = 0;
  caf::response_promise stop_promise;
  std::vector<caf::response_promise> quiet_waiters;  // (tick, sync): answered when nothing passivates
  bool stopping = false;
  std::uint64_t turns = 0;
};

std::int64_t now_ms(const router_state& st) { return st.cfg.core.time->now_ms(); }

// The key had an event now: it is the least idle, and not trimmed.
void note_active(router_state& st, key_slot& slot) {
  slot.last_active_ms = now_ms(st);
  slot.trimmed = false;
}

// Forgets the routes memoized for a key (its next event resolves its route again).
void forget_routes(router_state& st, key_slot& slot) {
  for (const auto& r : slot.routes) st.route_cache.erase(r);
  std::vector<std::string>().swap(slot.routes);
}

// Drops a key's slot and the routes memoized for it.
void erase_slot(router_state& st, std::unordered_map<std::string, key_slot>::iterator it) {
  forget_routes(st, it->second);
  st.slots.erase(it);
  // Bucket arrays do not shrink by themselves: after a burst of sessions went quiet they
  // would cost 8 bytes per bucket for every session there once was.
  auto shrink = [](auto& map) {
    if (map.bucket_count() > 1024 && map.size() * 8 < map.bucket_count()) map.rehash(0);
  };
  shrink(st.slots);
  shrink(st.route_cache);
}

// The events waiting on a key that will get no actor fail, each exactly once: the runtime
// stops (why ""), or the key's row could not be read.
void refuse_waiting(caf::event_based_actor* self, key_slot& slot, const std::string& why = "") {
  for (auto& fn : slot.waiting) fn(self, caf::actor(), why);
  slot.waiting.clear();
}

void activate(caf::event_based_actor* self, std::shared_ptr<router_state> st, const std::string& key);
void admit(caf::event_based_actor* self, std::shared_ptr<router_state> st);
void deliver_if_quiet(router_state& st);
void passivate(caf::event_based_actor* self, router_state& st, const std::string& key, const std::string& why);

std::size_t cap_of(const router_state& st) {
  return std::max<std::size_t>(1, st.cfg.core.settings->session.max_live_sessions);
}

// Opens queued keys while there is room; while keys still wait, the least recently used live
// session is asked to make room (one passivation in flight per waiting key at most).
void admit(caf::event_based_actor* self, std::shared_ptr<router_state> st) {
  while (!st->admission.empty() && st->open < cap_of(*st)) {
    const std::string key = st->admission.front();
    st->admission.pop_front();
    auto it = st->slots.find(key);
    if (it == st->slots.end() || it->second.state != key_slot::phase::queued) continue;
    ++st->open;
    activate(self, st, key);
  }
  while (st->passivating < st->admission.size() && !st->lru.empty()) passivate(self, *st, st->lru.back(), "lru");
}

void deliver_or_wait(caf::event_based_actor* self, std::shared_ptr<router_state> st, const std::string& key,
                     const std::string& agent, deliver_fn fn) {
  auto [it, fresh] = st->slots.try_emplace(key);
  key_slot& slot = it->second;
  if (fresh) {
    slot.agent = agent;
    slot.waiting.push_back(std::move(fn));
    if (st->open < cap_of(*st)) {
      ++st->open;
      activate(self, st, key);
    } else {
      // Full: this key waits its turn while the least recently used live session makes room.
      slot.state = key_slot::phase::queued;
      st->admission.push_back(key);
      admit(self, st);
    }
    return;
  }
  if (slot.state == key_slot::phase::live) {
    note_active(*st, slot);
    st->lru.splice(st->lru.begin(), st->lru, slot.lru);
    fn(self, slot.actor, std::string());
  } else {
    slot.waiting.push_back(std::move(fn));
  }
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
  deps->syncer = st.cfg.syncer;
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

void activate(caf::event_based_actor* self, std::shared_ptr<router_state> st, const std::string& key) {
  key_slot& slot = st->slots[key];
  slot.state = key_slot::phase::activating;
  const std::string agent = slot.agent;
  auto store = st->cfg.agents.store.at(agent);
  self->request(store, caf::infinite, get_atom::value, key)
      .then([self, st, key, agent](entry_reply& row) {
        auto it = st->slots.find(key);
        if (it == st->slots.end()) return;
        if (!row.error.empty()) {
          // The row exists but cannot be read (sessions.json changed under the runtime): no
          // actor, no new session over it; the events fail with the reason.
          refuse_waiting(self, it->second, "the session row cannot be read: " + row.error);
          --st->open;
          erase_slot(*st, it);
          admit(self, st);
          return;
        }
        key_slot& slot = it->second;
        slot.actor = self->spawn(session_actor, key, std::move(row), deps_of(*st, agent));
        slot.state = key_slot::phase::live;
        note_active(*st, slot);
        st->lru.push_front(key);
        slot.lru = st->lru.begin();
        ++st->live;
        auto waiting = std::move(slot.waiting);
        slot.waiting.clear();
        for (auto& fn : waiting) fn(self, slot.actor, std::string());
        if (st->stopping)
          passivate(self, *st, key, "stop");
        else if (!st->admission.empty())
          admit(self, st);  // keys queued while this one activated: someone must make room
      });
}

void passivate(caf::event_based_actor* self, router_state& st, const std::string& key, const std::string& why) {
  auto it = st.slots.find(key);
  if (it == st.slots.end() || it->second.state != key_slot::phase::live) return;
  it->second.state = key_slot::phase::passivating;
  ++st.passivating;
  st.lru.erase(it->second.lru);
  self->send(it->second.actor, passivate_atom::value, why);
}


void on_passivated(caf::event_based_actor* self, std::shared_ptr<router_state> st, const std::string& key) {
  auto it = st->slots.find(key);
  if (it == st->slots.end()) return;
  --st->live;
  --st->open;
  --st->passivating;
  it->second.actor = nullptr;
  if (!it->second.waiting.empty() && !st->stopping) {
    // Events arrived meanwhile: a fresh actor takes them, in order — after the keys that
    // were already waiting for a slot.
    it->second.state = key_slot::phase::queued;
    st->admission.push_back(key);
  } else {
    refuse_waiting(self, it->second);  // stopping: events that arrived during the passivation
    erase_slot(*st, it);
  }
  admit(self, st);
  if (st->stopping && st->slots.empty() && st->stop_promise.pending()) st->stop_promise.deliver(true);
  deliver_if_quiet(*st);
}

bool any_passivating(const router_state& st) { return st.passivating > 0; }

void deliver_if_quiet(router_state& st) {
  if (st.quiet_waiters.empty() || any_passivating(st)) return;
  for (auto& rp : st.quiet_waiters) rp.deliver(true);
  st.quiet_waiters.clear();
}

void sweep(caf::event_based_actor* self, router_state& st) {
  const auto& settings = st.cfg.core.settings->session;
  const std::int64_t now = now_ms(st);
  // Least recently active last: stop at the first key that is still within its idle time.
  if (const std::int64_t idle = settings.passivate_idle_ms; idle > 0)
    while (!st.lru.empty()) {
      const std::string key = st.lru.back();
      if (now - st.slots.at(key).last_active_ms < idle) break;
      passivate(self, st, key, "idle");
    }
  // Live sessions idle past trimIdleMs drop their open transcript, cached context and row
  // (session_core::trim), and their memoized routes here; once per idle spell.
  if (const std::int64_t idle = settings.trim_idle_ms; idle > 0)
    for (auto it = st.lru.rbegin(); it != st.lru.rend(); ++it) {
      key_slot& slot = st.slots.at(*it);
      if (now - slot.last_active_ms < idle) break;
      if (slot.trimmed) continue;
      slot.trimmed = true;
      forget_routes(st, slot);
      self->send(slot.actor, trim_atom::value);
    }
}

void schedule_sweep(caf::event_based_actor* self, const router_state& st) {
  if (!st.cfg.self_scheduling) return;
  const auto& settings = st.cfg.core.settings->session;
  std::int64_t every = 60000;  // a quarter of the shortest idle time in use, 1 s to 1 min
  for (std::int64_t idle : {settings.passivate_idle_ms, settings.trim_idle_ms})
    if (idle > 0) every = std::min(every, std::max<std::int64_t>(idle / 4, 1000));
  self->delayed_send(self, std::chrono::milliseconds(every), tick_atom::value);
}

void on_chat(caf::event_based_actor* self, std::shared_ptr<router_state> st, chat_event ev, outcome_sink sink) {
  if (st->stopping) {
    turn_outcome out;
    out.st = status(errc::cancelled, "the runtime is stopping");
    sink(std::move(out));
    return;
  }
  if (!ev.session_key.empty() && !is_plausible_session_key(ev.session_key)) {
    turn_outcome out;
    out.st = status(errc::invalid_argument, fmt::format("session key {:?} is not a valid key (at most 512 bytes of "
                                                        "UTF-8 text, no control characters, no '//' or '..' path segments)",
                                                        ev.session_key.substr(0, 80)));
    sink(std::move(out));
    return;
  }
  std::string cache_key = route_cache_key(ev);
  auto cached = st->route_cache.find(cache_key);
  const bool memoized = cached == st->route_cache.end();
  if (memoized) {
    route fresh = resolve_route(route_input_of(ev), st->cfg.core.settings->routing);
    if (st->route_cache.size() >= kRouteCacheSize) {
      st->route_cache.clear();
      for (auto& [key, slot] : st->slots) slot.routes.clear();
    }
    cached = st->route_cache.emplace(std::move(cache_key), std::move(fresh)).first;
  }
  const route& r = cached->second;
  if (!st->cfg.agents.store.count(r.agent_id)) {
    turn_outcome out;
    out.session_key = r.session_key;
    out.st = status(errc::invalid_argument, fmt::format("no agent {} is configured (agents.list)", r.agent_id));
    if (memoized) st->route_cache.erase(cached);  // no slot to drop it with
    sink(std::move(out));
    return;
  }
  route_facts facts = facts_of(ev, r);
  ++st->turns;
  deliver_or_wait(self, st, r.session_key, r.agent_id,
                  [ev = std::move(ev), facts = std::move(facts), sink = std::move(sink)](
                      caf::event_based_actor* s, const caf::actor& a, const std::string& refused) mutable {
                    if (!a) {
                      turn_outcome out;
                      out.st = refused.empty()
                                   ? status(errc::cancelled, "the runtime stopped before this session could start")
                                   : status(errc::io_error, refused);
                      sink(std::move(out));
                      return;
                    }
                    s->send(a, chat_atom::value, std::move(ev), std::move(facts), std::move(sink));
                  });
  if (memoized)  // the slot exists now (deliver_or_wait made it); the route goes with it
    if (auto it = st->slots.find(r.session_key); it != st->slots.end()) {
      auto& routes = it->second.routes;
      if (routes.size() < kRoutesPerSession && std::find(routes.begin(), routes.end(), cached->first) == routes.end())
        routes.push_back(cached->first);
    }
}

// Answers once every session that exists now has handled what was sent to it before (a
// stats request queues behind them; keys not yet live get it after their waiting events).
caf::response_promise settle(caf::event_based_actor* self, std::shared_ptr<router_state> st) {
  auto rp = self->make_response_promise();
  auto left = std::make_shared<std::size_t>(1);
  auto done = [rp, left]() mutable {
    if (--*left == 0) rp.deliver(true);
  };
  auto ask = [done](caf::event_based_actor* s, const caf::actor& a, const std::string&) mutable {
    if (!a) return done();
    s->request(a, caf::infinite, stats_atom::value).then([done](std::string&) mutable { done(); },
                                                          [done](caf::error&) mutable { done(); });
  };
  for (auto& [key, slot] : st->slots) {
    if (slot.state == key_slot::phase::passivating) continue;
    ++*left;
    if (slot.state == key_slot::phase::live) ask(self, slot.actor, std::string());
    else slot.waiting.push_back(ask);
  }
  done();
  return rp;
}

}  // namespace

caf::behavior router_actor(caf::event_based_actor* self, router_config cfg) {
  auto st = std::make_shared<router_state>();
  st->cfg = std::move(cfg);
  schedule_sweep(self, *st);
  return {
      [self, st](chat_atom, chat_event& ev, outcome_sink& sink) { on_chat(self, st, std::move(ev), std::move(sink)); },
      [self, st](chat_atom, chat_event& ev) -> caf::result<turn_outcome> {
        auto rp = self->make_response_promise<turn_outcome>();
        on_chat(self, st, std::move(ev), [rp](turn_outcome out) mutable { rp.deliver(std::move(out)); });
        return rp;
      },
      [self, st](system_atom, system_event& ev) {
        if (st->stopping) return;
        auto [agent, key] = system_event_target(ev, st->cfg.core.settings->routing);
        if (!st->cfg.agents.store.count(agent)) return;
        deliver_or_wait(self, st, key, agent, [ev = std::move(ev)](caf::event_based_actor* s, const caf::actor& a, const std::string&) mutable {
          if (a) s->send(a, system_atom::value, std::move(ev));
        });
      },
      [self, st](passivate_atom, const std::string& key, const std::string& why) { passivate(self, *st, key, why); },
      [self, st](passivated_atom, const std::string& key) { on_passivated(self, st, key); },
      [self, st](tick_atom) {
        sweep(self, *st);
        schedule_sweep(self, *st);
      },
      [self, st](tick_atom, settle_atom) -> caf::result<bool> {  // virtual time: sweep, wait for quiet
        sweep(self, *st);
        st->quiet_waiters.push_back(self->make_response_promise());
        auto rp = st->quiet_waiters.back();
        deliver_if_quiet(*st);
        return rp;
      },
      [self, st](stop_atom) -> caf::result<bool> {
        st->stopping = true;
        // Queued keys never got an actor: their events fail as the runtime stops.
        for (const auto& key : st->admission) {
          auto it = st->slots.find(key);
          if (it == st->slots.end()) continue;
          refuse_waiting(self, it->second);
          erase_slot(*st, it);
        }
        st->admission.clear();
        if (st->slots.empty()) return true;
        st->stop_promise = self->make_response_promise();
        std::vector<std::string> keys;
        for (auto& [key, slot] : st->slots) keys.push_back(key);
        for (auto& key : keys) passivate(self, *st, key, "stop");
        return st->stop_promise;
      },
      [self, st](settle_atom) -> caf::result<bool> { return settle(self, st); },
      [st](stats_atom) {
        std::size_t waiting = 0, trimmed = 0;
        for (auto& [k, s] : st->slots) {
          waiting += s.waiting.size();
          trimmed += s.state == key_slot::phase::live && s.trimmed;
        }
        return fmt::format("live={} trimmed={} slots={} open={} queued={} waiting={} turns={} routes={}", st->live,
                           trimmed, st->slots.size(), st->open, st->admission.size(), waiting, st->turns,
                           st->route_cache.size());
      },
  };
}

}  // namespace sessionrt::actors
