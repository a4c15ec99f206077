// session_slots: the router's table of session keys and the actor each one has (SPEC §2). A
// key's slot goes queued -> activating -> live -> passivating and is dropped (or queued again,
// when events arrived during the passivation). At most `cap` slots are open (activating, live
// or passivating: each may hold a transcript open, session.maxLiveSessions); keys beyond it wait
// in arrival order while the least recently used live key is passivated to make room, one
// passivation in flight per waiting key. Events for a key that is not live wait in its slot, in
// order, and are handed back when it becomes live (or fails, or the runtime stops).
// A key can be held (session administration: a row rewritten while no actor has it): a live
// actor is passivated, and until the last release the key gets no actor; what arrives waits in
// its slot (phase held) and is admitted, in order, after the release.
// The settle memo (settled_idle, known_idle) lets a settle count a live key idle without asking
// its actor, while the actor was idle at its last answer and nothing was sent to it since.
// No CAF: every call returns what the caller must do in a plan (keys to activate, to
// passivate, to trim) and the events it must deliver or refuse; the caller owns the actors.
// `Actor` is the handle of a live key's actor, `Event` what waits for it; both movable.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sessionrt::actors {

enum class slot_phase { queued, activating, live, passivating, held };

// What the caller does after a call, in this order: activate (read the row, spawn, then
// activated() or activation_failed()), passivate (ask the actor; passivated() when it says
// so), trim (ask the live actor to drop its caches); forget the dropped routes.
struct slot_passivation {
  std::string key, why;
  // Ask the actor to go only if no turn runs (it may decline: declined()); else it goes after
  // its running turn.
  bool only_if_idle = false;
};

struct slot_plan {
  std::vector<std::string> activate;
  std::vector<slot_passivation> passivate;
  std::vector<std::string> trim;
  std::vector<std::string> dropped_routes;  // routes memoized for keys that went (or trimmed)
};

struct slot_counts {
  std::size_t slots = 0, open = 0, live = 0, passivating = 0, queued = 0, waiting = 0, trimmed = 0;
};

template <class Actor, class Event>
class session_slots {
 public:
  struct slot {
    slot_phase state = slot_phase::activating;
    Actor actor{};
    std::string agent;
    std::vector<Event> waiting;  // events that arrived while not live, in order
    std::int64_t last_active_ms = 0;
    bool trimmed = false;                    // asked to trim since its last event
    std::list<std::string>::iterator lru{};  // position in lru_ (trimmed_ when trimmed) while live
    std::vector<std::string> routes;         // route memo keys that resolved to this key
    // The settle memo (settled_idle()): what the router sent the actor that may give it work
    // (events, a trim) since the slot was made, and that count when the actor last answered a
    // settle idle (never: ~0).
    std::uint64_t sends = 0;
    std::uint64_t idle_at = ~std::uint64_t(0);
  };

  // cap: session.maxLiveSessions (at least 1 is used).
  explicit session_slots(std::size_t cap) : cap_(std::max<std::size_t>(1, cap)) {}

  // An event for `key` of `agent` at `now`: returns the live actor to hand it to (the key is
  // now the most recently used), or nullptr when the event was kept to wait (a fresh key's
  // activation or place in the queue is in `out`).
  const Actor* arrive(const std::string& key, const std::string& agent, Event& ev, std::int64_t now, slot_plan& out) {
    auto [it, fresh] = slots_.try_emplace(key);
    slot& s = it->second;
    if (!fresh && s.state == slot_phase::live) {
      lru_.splice(lru_.begin(), list_of(s), s.lru);
      touch(s, now);
      return &s.actor;
    }
    s.waiting.push_back(std::move(ev));
    if (!fresh) return nullptr;
    s.agent = agent;
    if (holds_.count(key)) {
      s.state = slot_phase::held;
    } else if (open_ < cap_) {
      ++open_;
      s.state = slot_phase::activating;
      out.activate.push_back(key);
    } else {
      s.state = slot_phase::queued;
      admission_.push_back(key);
      admit(out);
    }
    return nullptr;
  }

  // The key's actor is up: it is live and gets the returned events, in order, first. While
  // stopping it is passivated at once.
  std::vector<Event> activated(const std::string& key, Actor actor, std::int64_t now, slot_plan& out) {
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::activating) return {};
    slot& s = it->second;
    s.actor = std::move(actor);
    s.state = slot_phase::live;
    touch(s, now);
    lru_.push_front(key);
    s.lru = lru_.begin();
    ++live_;
    std::vector<Event> ready = std::exchange(s.waiting, {});
    if (stopping_)
      passivate(key, "stop", out);
    else if (holds_.count(key))
      passivate(key, "admin", out);  // after the events sent before the hold
    else if (!admission_.empty())
      admit(out);  // keys queued while this one activated: someone must make room
    return ready;
  }

  // The key got no actor (its row cannot be read): the slot goes; the returned events fail.
  std::vector<Event> activation_failed(const std::string& key, slot_plan& out) {
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::activating) return {};
    std::vector<Event> refused = std::exchange(it->second.waiting, {});
    --open_;
    erase(it, out);
    admit(out);
    return refused;
  }

  // Asks a live key's actor to passivate (no effect in any other phase). `key` may be an
  // element of lru_ or trimmed_: it is copied before its node goes.
  void passivate(const std::string& key, const std::string& why, slot_plan& out, bool only_if_idle = false) {
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::live) return;
    it->second.state = slot_phase::passivating;
    ++passivating_;
    out.passivate.push_back({key, why, only_if_idle});
    list_of(it->second).erase(it->second.lru);
  }

  // The key's actor declined a passivation it was asked for only if idle (it is running a
  // turn): the key is live again, most recently used, and gets the returned events (those that
  // arrived meanwhile), in order. Held or stopping, it is asked again without condition
  // (`out`) and keeps its events.
  std::vector<Event> declined(const std::string& key, std::int64_t now, slot_plan& out) {
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::passivating) return {};
    if (stopping_ || holds_.count(key)) {
      out.passivate.push_back({key, stopping_ ? "stop" : "admin"});
      return {};
    }
    slot& s = it->second;
    s.state = slot_phase::live;
    --passivating_;
    touch(s, now);
    lru_.push_front(key);
    s.lru = lru_.begin();
    return std::exchange(s.waiting, {});
  }

  // The key's actor passivated. Events that arrived meanwhile queue the key again (behind the
  // keys already waiting), unless stopping: then they are returned to be refused.
  std::vector<Event> passivated(const std::string& key, slot_plan& out) {
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::passivating) return {};
    --live_;
    --open_;
    --passivating_;
    it->second.actor = Actor{};
    std::vector<Event> refused;
    if (!it->second.waiting.empty() && !stopping_ && holds_.count(key)) {
      it->second.state = slot_phase::held;
    } else if (!it->second.waiting.empty() && !stopping_) {
      it->second.state = slot_phase::queued;
      admission_.push_back(key);
    } else {
      refused = std::exchange(it->second.waiting, {});
      erase(it, out);
    }
    admit(out);
    return refused;
  }

  // Live keys idle for passivate_idle_ms are passivated ("idle", only if no turn runs: the
  // table's clock counts from the last event, not the turn's end); live keys idle for
  // trim_idle_ms are trimmed once per idle spell (their routes dropped). 0 disables either.
  void sweep(std::int64_t now, std::int64_t passivate_idle_ms, std::int64_t trim_idle_ms, slot_plan& out) {
    if (passivate_idle_ms > 0)
      while (const std::string* oldest = least_recent()) {
        const std::string key = *oldest;
        if (now - slots_.at(key).last_active_ms < passivate_idle_ms) break;
        passivate(key, "idle", out, true);
      }
    // Only untrimmed keys are looked at: the trimmed ones wait in trimmed_ (see there).
    if (trim_idle_ms > 0)
      while (!lru_.empty()) {
        slot& s = slots_.at(lru_.back());
        if (now - s.last_active_ms < trim_idle_ms) break;
        out.trim.push_back(lru_.back());
        trimmed_.splice(trimmed_.begin(), lru_, s.lru);
        s.trimmed = true;
        ++s.sends;
        drop_routes(s, out);
      }
  }

  // Shutting down: queued keys never get an actor (their events are returned to be refused),
  // every live key is passivated ("stop"), keys still activating are when they are up.
  std::vector<Event> stop(slot_plan& out) {
    stopping_ = true;
    std::vector<Event> refused;
    for (const auto& key : admission_) {
      auto it = slots_.find(key);
      if (it == slots_.end() || it->second.state != slot_phase::queued) continue;
      for (auto& e : it->second.waiting) refused.push_back(std::move(e));
      erase(it, out);
    }
    admission_.clear();
    for (auto it = slots_.begin(); it != slots_.end();) {
      auto next = std::next(it);
      if (it->second.state == slot_phase::held) {
        for (auto& e : it->second.waiting) refused.push_back(std::move(e));
        erase(it, out);
      }
      it = next;
    }
    std::vector<std::string> keys;
    for (auto& [key, s] : slots_) keys.push_back(key);
    for (auto& key : keys) passivate(key, "stop", out);
    return refused;
  }

  // Holds `key` (holds nest): a live actor is asked to passivate ("admin"); one still
  // activating is once it is up (after the events that were waiting for it); a queued key
  // leaves the queue. Returns true when the key has no actor now (none, queued or held).
  bool hold(const std::string& key, slot_plan& out) {
    ++holds_[key];
    auto it = slots_.find(key);
    if (it == slots_.end()) return true;
    slot& s = it->second;
    if (s.state == slot_phase::queued) {
      s.state = slot_phase::held;
      admission_.erase(std::find(admission_.begin(), admission_.end(), key));
    }
    if (s.state == slot_phase::live) passivate(key, "admin", out);
    return s.state == slot_phase::held;
  }
  // Ends one hold; at the last, events that waited meanwhile queue the key (behind the keys
  // already waiting) and are admitted as there is room.
  void release(const std::string& key, slot_plan& out) {
    auto h = holds_.find(key);
    if (h == holds_.end()) return;
    if (--h->second > 0) return;
    holds_.erase(h);
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::held) return;
    it->second.state = slot_phase::queued;
    admission_.push_back(key);
    admit(out);
  }
  // Ends one hold without admitting what waited (a shard that left this node): at the last,
  // a held slot goes and the events that waited are returned, to be refused.
  std::vector<Event> release_dropping(const std::string& key, slot_plan& out) {
    auto h = holds_.find(key);
    if (h == holds_.end()) return {};
    if (--h->second > 0) return {};
    holds_.erase(h);
    auto it = slots_.find(key);
    if (it == slots_.end() || it->second.state != slot_phase::held) return {};
    std::vector<Event> refused = std::exchange(it->second.waiting, {});
    erase(it, out);
    return refused;
  }
  // Some hold on `key` is not released yet.
  bool held(const std::string& key) const { return holds_.count(key) > 0; }
  // No actor has the key (no slot, or it waits queued or held).
  bool actorless(const std::string& key) const {
    auto it = slots_.find(key);
    return it == slots_.end() || it->second.state == slot_phase::queued || it->second.state == slot_phase::held;
  }

  // Remembers a route memo key for `key`'s slot (dropped with it), up to `per_slot` of them.
  void add_route(const std::string& key, const std::string& route, std::size_t per_slot) {
    auto it = slots_.find(key);
    if (it == slots_.end()) return;
    auto& routes = it->second.routes;
    if (routes.size() < per_slot && std::find(routes.begin(), routes.end(), route) == routes.end())
      routes.push_back(route);
  }
  // The route memo started afresh: no slot remembers a route.
  void clear_routes() {
    for (auto& [key, s] : slots_) s.routes.clear();
  }

  slot* find(const std::string& key) {
    auto it = slots_.find(key);
    return it == slots_.end() ? nullptr : &it->second;
  }
  // f(key, slot&) for every slot, in no particular order.
  template <class F>
  void each(F&& f) {
    for (auto& [key, s] : slots_) f(key, s);
  }

  bool stopping() const { return stopping_; }
  bool empty() const { return slots_.empty(); }
  // No passivation is in flight.
  bool quiet() const { return passivating_ == 0; }
  slot_counts counts() const {
    slot_counts c;
    c.slots = slots_.size();
    c.open = open_;
    c.live = live_;
    c.passivating = passivating_;
    c.queued = admission_.size();
    for (const auto& [k, s] : slots_) {
      c.waiting += s.waiting.size();
      c.trimmed += s.state == slot_phase::live && s.trimmed;
    }
    return c;
  }

  // The settle memo. An actor that answered a settle idle (nothing running, queued, awaited or
  // armed: session_wait::idle) gets work again only from the router (events, a trim, a
  // passivation): other actors answer what it asked, and it asks nothing while idle. So while
  // nothing was sent to it since, a settle may count it idle without asking. Take the ticket
  // when a settle asks; settled_idle() records an idle answer given for that ticket (nothing
  // sent after the ask; the same actor: a new one was handed its events, which counts). A
  // settle that reaches the actor among other events (those that waited for it to be live)
  // has no ticket: one send counts them all.
  static std::uint64_t settle_ticket(const slot& s) { return s.sends; }
  void settled_idle(const std::string& key, std::uint64_t ticket) {
    auto it = slots_.find(key);
    if (it != slots_.end() && it->second.state == slot_phase::live && it->second.sends == ticket)
      it->second.idle_at = ticket;
  }
  // A live key whose actor is known idle (see above).
  static bool known_idle(const slot& s) { return s.state == slot_phase::live && s.idle_at == s.sends; }

 private:
  // The key got an event (its actor is handed it, or the ones that waited): also a send for
  // the settle memo.
  static void touch(slot& s, std::int64_t now) {
    s.last_active_ms = now;
    s.trimmed = false;
    ++s.sends;
  }
  static void drop_routes(slot& s, slot_plan& out) {
    for (auto& r : s.routes) out.dropped_routes.push_back(std::move(r));
    std::vector<std::string>().swap(s.routes);
  }

  void erase(typename std::unordered_map<std::string, slot>::iterator it, slot_plan& out) {
    drop_routes(it->second, out);
    slots_.erase(it);
    // Bucket arrays do not shrink by themselves: after a burst of sessions went quiet they
    // would cost 8 bytes per bucket for every session there once was.
    if (slots_.bucket_count() > 1024 && slots_.size() * 8 < slots_.bucket_count()) slots_.rehash(0);
  }

  // Opens queued keys while there is room; while keys still wait, the least recently used live
  // key is asked to make room (one passivation in flight per waiting key at most).
  void admit(slot_plan& out) {
    while (!admission_.empty() && open_ < cap_) {
      const std::string key = admission_.front();
      admission_.pop_front();
      auto it = slots_.find(key);
      if (it == slots_.end() || it->second.state != slot_phase::queued) continue;
      ++open_;
      it->second.state = slot_phase::activating;
      out.activate.push_back(key);
    }
    while (passivating_ < admission_.size())
      if (const std::string* oldest = least_recent())
        passivate(*oldest, "lru", out);
      else
        break;
  }

  // The live keys in order of their last event are lru_ followed by trimmed_: a key is trimmed
  // only once idle for trim_idle_ms, and every event makes it untrimmed and the most recent.
  std::list<std::string>& list_of(const slot& s) { return s.trimmed ? trimmed_ : lru_; }
  const std::string* least_recent() const {
    if (!trimmed_.empty()) return &trimmed_.back();
    return lru_.empty() ? nullptr : &lru_.back();
  }

  std::size_t cap_;
  std::unordered_map<std::string, slot> slots_;
  // Live keys, most recently active first, split at the trim: a sweep walks only the untrimmed
  // (lru_) to find what to trim, not the thousands a long passivate_idle_ms keeps trimmed.
  std::list<std::string> lru_;
  std::list<std::string> trimmed_;
  std::deque<std::string> admission_;   // queued keys, in arrival order
  std::unordered_map<std::string, int> holds_;  // held keys -> number of holds
  std::size_t open_ = 0;                // activating, live or passivating
  std::size_t passivating_ = 0;
  std::size_t live_ = 0;
  bool stopping_ = false;
};

}  // namespace sessionrt::actors
