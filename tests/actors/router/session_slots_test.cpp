// session_slots: admission order against the cap, the LRU choice, the counters across a
// passivation with events waiting, and stop.
#include "actors/router/session_slots.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace sessionrt::actors;

namespace {

using slots_t = session_slots<int, std::string>;

// Sends one event; returns the actor it went to (0: it waits).
int arrive(slots_t& s, const std::string& key, std::string ev, std::int64_t now, slot_plan& plan) {
  const int* a = s.arrive(key, "main", ev, now, plan);
  return a ? *a : 0;
}

std::vector<std::string> passivated_keys(const slot_plan& p) {
  std::vector<std::string> keys;
  for (const auto& q : p.passivate) keys.push_back(q.key + ":" + q.why);
  return keys;
}

}  // namespace

TEST_CASE("session_slots: a fresh key activates while there is room, its events wait until it is live") {
  slots_t s(2);
  slot_plan p;
  CHECK(arrive(s, "a", "a1", 0, p) == 0);
  CHECK(arrive(s, "a", "a2", 1, p) == 0);
  CHECK(p.activate == std::vector<std::string>{"a"});
  CHECK(s.counts().open == 1);
  CHECK(s.counts().live == 0);
  CHECK(s.counts().waiting == 2);
  slot_plan q;
  CHECK(s.activated("a", 7, 2, q) == std::vector<std::string>{"a1", "a2"});
  CHECK(q.activate.empty());
  CHECK(q.passivate.empty());
  CHECK(s.counts().live == 1);
  CHECK(s.counts().waiting == 0);
  CHECK(arrive(s, "a", "a3", 3, q) == 7);  // live: handed over at once
}

TEST_CASE("session_slots: past the cap keys are admitted in arrival order as the least recently used make room") {
  slots_t s(2);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  arrive(s, "b", "b1", 0, p);
  s.activated("a", 1, 10, p);
  s.activated("b", 2, 20, p);
  arrive(s, "a", "a2", 30, p);  // a is now the most recently used; b the least
  slot_plan full;
  CHECK(arrive(s, "c", "c1", 40, full) == 0);
  CHECK(arrive(s, "d", "d1", 41, full) == 0);
  CHECK(full.activate.empty());
  // One passivation per waiting key, least recently used first.
  CHECK(passivated_keys(full) == std::vector<std::string>{"b:lru", "a:lru"});
  CHECK_FALSE(full.passivate[0].only_if_idle);  // room is needed: after the running turn
  auto c = s.counts();
  CHECK(c.open == 2);
  CHECK(c.queued == 2);
  CHECK(c.passivating == 2);
  CHECK(c.live == 2);  // passivating actors still count as live until they report

  slot_plan after_b;
  CHECK(s.passivated("b", after_b).empty());
  CHECK(after_b.activate == std::vector<std::string>{"c"});  // first come, first admitted
  slot_plan after_a;
  s.passivated("a", after_a);
  CHECK(after_a.activate == std::vector<std::string>{"d"});
  c = s.counts();
  CHECK(c.open == 2);
  CHECK(c.live == 0);
  CHECK(c.queued == 0);
  CHECK(c.slots == 2);
}

TEST_CASE("session_slots: events arriving during a passivation queue the key again with the counters kept right") {
  slots_t s(1);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  s.activated("a", 1, 0, p);
  slot_plan idle;
  s.sweep(1000, 500, 0, idle);
  CHECK(passivated_keys(idle) == std::vector<std::string>{"a:idle"});
  CHECK(idle.passivate[0].only_if_idle);  // a turn may still run: the actor decides
  CHECK(arrive(s, "a", "a2", 1001, idle) == 0);  // waits: the actor is going
  CHECK(arrive(s, "b", "b1", 1002, idle) == 0);  // waits: no room
  auto c = s.counts();
  CHECK(c.open == 1);
  CHECK(c.passivating == 1);
  CHECK(c.queued == 1);
  CHECK(c.waiting == 2);
  CHECK(!s.quiet());

  slot_plan done;
  CHECK(s.passivated("a", done).empty());  // nothing refused: a gets a fresh actor later
  CHECK(done.activate == std::vector<std::string>{"b"});  // b was waiting first
  c = s.counts();
  CHECK(c.open == 1);
  CHECK(c.live == 0);
  CHECK(c.passivating == 0);
  CHECK(c.queued == 1);  // a, behind b
  CHECK(s.quiet());
  CHECK(s.find("a")->state == slot_phase::queued);
  CHECK(s.find("a")->waiting == std::vector<std::string>{"a2"});

  slot_plan b_up;
  CHECK(s.activated("b", 2, 1003, b_up) == std::vector<std::string>{"b1"});
  CHECK(passivated_keys(b_up) == std::vector<std::string>{"b:lru"});  // a still waits for room
  slot_plan b_gone;
  s.passivated("b", b_gone);
  CHECK(b_gone.activate == std::vector<std::string>{"a"});
  CHECK(s.activated("a", 3, 1004, b_gone) == std::vector<std::string>{"a2"});
  CHECK(s.counts().live == 1);
  CHECK(s.counts().open == 1);
}

TEST_CASE("session_slots: a key whose row cannot be read refuses its events and frees its place") {
  slots_t s(1);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  arrive(s, "b", "b1", 0, p);  // queued behind a
  slot_plan f;
  CHECK(s.activation_failed("a", f) == std::vector<std::string>{"a1"});
  CHECK(f.activate == std::vector<std::string>{"b"});
  CHECK(s.find("a") == nullptr);
  CHECK(s.counts().open == 1);
}

TEST_CASE("session_slots: the sweep trims once per idle spell and drops the key's routes") {
  slots_t s(4);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  s.add_route("a", "route-1", 16);
  s.add_route("a", "route-1", 16);
  s.activated("a", 1, 0, p);
  slot_plan t;
  s.sweep(100, 0, 50, t);
  CHECK(t.trim == std::vector<std::string>{"a"});
  CHECK(t.dropped_routes == std::vector<std::string>{"route-1"});
  slot_plan again;
  s.sweep(200, 0, 50, again);
  CHECK(again.trim.empty());
  CHECK(s.counts().trimmed == 1);
  arrive(s, "a", "a2", 201, again);  // active again: a new idle spell may trim it
  CHECK(s.counts().trimmed == 0);
}

TEST_CASE("session_slots: stop refuses what is queued, passivates the live and refuses what arrives meanwhile") {
  slots_t s(1);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  s.activated("a", 1, 0, p);
  arrive(s, "b", "b1", 1, p);  // queued: a is asked to make room
  CHECK(passivated_keys(p) == std::vector<std::string>{"a:lru"});
  arrive(s, "a", "a2", 2, p);  // waits for a's next actor
  slot_plan st;
  CHECK(s.stop(st) == std::vector<std::string>{"b1"});
  CHECK(st.passivate.empty());  // a is already passivating
  CHECK(s.stopping());
  slot_plan end;
  CHECK(s.passivated("a", end) == std::vector<std::string>{"a2"});  // stopping: refused, no new actor
  CHECK(end.activate.empty());
  CHECK(s.empty());
  CHECK(s.counts().open == 0);
}

TEST_CASE("session_slots: a key still activating when stop comes is passivated as soon as it is up") {
  slots_t s(2);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  slot_plan st;
  CHECK(s.stop(st).empty());
  CHECK(st.passivate.empty());
  slot_plan up;
  CHECK(s.activated("a", 1, 1, up) == std::vector<std::string>{"a1"});
  CHECK(passivated_keys(up) == std::vector<std::string>{"a:stop"});
}

TEST_CASE("session_slots: a held key gets no actor until released and keeps what arrived in order") {
  slots_t s(4);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  s.activated("a", 1, 0, p);
  slot_plan h;
  CHECK_FALSE(s.hold("a", h));  // live: asked to go first
  CHECK(passivated_keys(h) == std::vector<std::string>{"a:admin"});
  CHECK(arrive(s, "a", "a2", 10, h) == 0);
  slot_plan gone;
  CHECK(s.passivated("a", gone).empty());
  CHECK(gone.activate.empty());  // held: no new actor from the old row
  CHECK(s.actorless("a"));
  CHECK(s.find("a")->state == slot_phase::held);
  CHECK(arrive(s, "a", "a3", 11, gone) == 0);
  CHECK(s.counts().open == 0);

  slot_plan r;
  s.release("a", r);
  CHECK(r.activate == std::vector<std::string>{"a"});
  CHECK(s.activated("a", 2, 12, r) == std::vector<std::string>{"a2", "a3"});
}

TEST_CASE("session_slots: holds nest, a fresh key waits held, and one still activating goes once up") {
  slots_t s(4);
  slot_plan p;
  CHECK(s.hold("x", p));  // no slot: nothing to wait for
  CHECK(s.hold("x", p));
  CHECK(arrive(s, "x", "x1", 0, p) == 0);
  CHECK(p.activate.empty());
  s.release("x", p);
  CHECK(p.activate.empty());  // one hold is left
  s.release("x", p);
  CHECK(p.activate == std::vector<std::string>{"x"});

  slot_plan q;
  arrive(s, "y", "y1", 0, q);  // activating
  CHECK_FALSE(s.hold("y", q));
  slot_plan up;
  CHECK(s.activated("y", 5, 1, up) == std::vector<std::string>{"y1"});  // sent before the hold
  CHECK(passivated_keys(up) == std::vector<std::string>{"y:admin"});
  s.passivated("y", up);
  CHECK(s.actorless("y"));
  CHECK(s.find("y") == nullptr);  // nothing waited: the slot went
}

TEST_CASE("session_slots: a declined passivation makes the key live again with what arrived meanwhile") {
  slots_t s(4);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  s.activated("a", 1, 0, p);
  slot_plan m;
  s.passivate("a", "maintenance", m);
  CHECK(arrive(s, "a", "a2", 5, m) == 0);
  CHECK_FALSE(s.quiet());
  slot_plan d;
  CHECK(s.declined("a", 6, d) == std::vector<std::string>{"a2"});
  CHECK(d.passivate.empty());
  CHECK(s.quiet());
  CHECK(s.counts().live == 1);
  CHECK(arrive(s, "a", "a3", 7, d) == 1);  // live: straight to its actor

  // Held meanwhile: it is asked again, without condition, and keeps its events.
  slot_plan m2;
  s.passivate("a", "maintenance", m2);
  CHECK_FALSE(s.hold("a", m2));
  CHECK(arrive(s, "a", "a4", 8, m2) == 0);
  slot_plan d2;
  CHECK(s.declined("a", 9, d2).empty());
  CHECK(passivated_keys(d2) == std::vector<std::string>{"a:admin"});
  CHECK(s.find("a")->state == slot_phase::passivating);
}

TEST_CASE("session_slots: the settle memo holds an idle answer until the router sends the actor anything") {
  slots_t s(4);
  slot_plan p;
  arrive(s, "a", "a1", 0, p);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));  // activating: never known idle
  s.activated("a", 1, 0, p);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));  // live, never asked

  // An idle answer for the ticket taken at the ask: known idle.
  std::uint64_t t = slots_t::settle_ticket(*s.find("a"));
  s.settled_idle("a", t);
  CHECK(slots_t::known_idle(*s.find("a")));

  // An event handed over ends it; an idle answer to an ask made before that event does not
  // bring it back (the actor answered before it handled the event).
  const std::uint64_t before = slots_t::settle_ticket(*s.find("a"));
  CHECK(arrive(s, "a", "a2", 1, p) == 1);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));
  s.settled_idle("a", before);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));
  s.settled_idle("a", slots_t::settle_ticket(*s.find("a")));
  CHECK(slots_t::known_idle(*s.find("a")));

  // A trim ends it.
  slot_plan tp;
  s.sweep(100, 0, 50, tp);
  CHECK(tp.trim == std::vector<std::string>{"a"});
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));
  s.settled_idle("a", slots_t::settle_ticket(*s.find("a")));

  // Passivating: not live, so not known idle; declined, it is live again with an event.
  slot_plan m;
  s.passivate("a", "maintenance", m, true);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));
  const std::uint64_t during = slots_t::settle_ticket(*s.find("a"));
  s.settled_idle("a", during);  // an answer while passivating is not recorded
  slot_plan d;
  s.declined("a", 101, d);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));

  // A new actor for the key (passivated, then events came): never known idle from the old one.
  s.settled_idle("a", slots_t::settle_ticket(*s.find("a")));
  CHECK(slots_t::known_idle(*s.find("a")));
  slot_plan m2;
  s.passivate("a", "idle", m2);
  CHECK(arrive(s, "a", "a3", 102, m2) == 0);
  const std::uint64_t old = slots_t::settle_ticket(*s.find("a"));
  slot_plan q;
  s.passivated("a", q);
  s.activated("a", 2, 103, q);
  s.settled_idle("a", old);
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));

  // The no-ticket answer (~0) is never recorded.
  s.settled_idle("a", ~std::uint64_t(0));
  CHECK_FALSE(slots_t::known_idle(*s.find("a")));
}

// The sweep and the LRU choice against a plain model of the live keys (last event time, order
// of events, trimmed or not) over random events, sweeps and passivations: the sweep trims the
// live untrimmed keys idle for the trim time, oldest first; it passivates the live keys idle
// for the passivation time (trimmed or not), oldest first; past the cap the least recently
// used live key makes room.
TEST_CASE("session_slots: sweeps and the LRU choice agree with a model of the live keys over random events") {
  struct model_key {
    std::int64_t last = 0;
    std::uint64_t order = 0;  // when it last got an event (ties of `last` go by this)
    bool trimmed = false;
  };
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t cap = 4 + seed % 5;
    slots_t s(cap);
    std::map<std::string, model_key> live;  // the model: live keys only
    std::set<std::string> activating, passivating;
    std::uint64_t order = 0;
    std::int64_t now = 0;
    int actor = 1;
    auto oldest_first = [&](auto keep) {
      std::vector<std::pair<std::uint64_t, std::string>> v;
      for (const auto& [k, m] : live)
        if (keep(m)) v.emplace_back(m.order, k);
      std::sort(v.begin(), v.end());
      std::vector<std::string> keys;
      for (auto& [o, k] : v) keys.push_back(k);
      return keys;
    };
    auto apply = [&](const slot_plan& p) {
      for (const auto& k : p.activate) activating.insert(k);
      for (const auto& q : p.passivate) {
        live.erase(q.key);
        passivating.insert(q.key);
      }
    };
    for (int step = 0; step < 3000; ++step) {
      now += static_cast<std::int64_t>(rng() % 20);
      const unsigned what = rng() % 10;
      slot_plan p;
      if (what < 5) {  // an event for one of 24 keys
        const std::string key = "k" + std::to_string(rng() % 24);
        const bool was_live = live.count(key) > 0;
        std::string ev = "e";
        const int* a = s.arrive(key, "main", ev, now, p);
        CHECK((a != nullptr) == was_live);
        if (was_live) live[key] = {now, ++order, false};
        // Room made for a queued key: the least recently used live key(s), in that order.
        std::vector<std::string> expected = oldest_first([](const model_key&) { return true; });
        expected.resize(std::min(expected.size(), p.passivate.size()));
        std::vector<std::string> got;
        for (const auto& q : p.passivate) got.push_back(q.key);
        CHECK(got == expected);
        apply(p);
      } else if (what < 7 && !activating.empty()) {  // an activation completes
        auto it = std::next(activating.begin(), static_cast<long>(rng() % activating.size()));
        const std::string key = *it;
        activating.erase(it);
        s.activated(key, actor++, now, p);
        live[key] = {now, ++order, false};
        apply(p);
      } else if (what < 8 && !passivating.empty()) {  // a passivation completes
        auto it = std::next(passivating.begin(), static_cast<long>(rng() % passivating.size()));
        const std::string key = *it;
        passivating.erase(it);
        s.passivated(key, p);
        apply(p);
      } else {  // a sweep
        const std::int64_t passivate_idle = (rng() % 4 == 0) ? 0 : 100 + static_cast<std::int64_t>(rng() % 200);
        const std::int64_t trim_idle = (rng() % 4 == 0) ? 0 : 20 + static_cast<std::int64_t>(rng() % 100);
        std::vector<std::string> to_passivate, to_trim;
        if (passivate_idle > 0)
          to_passivate = oldest_first([&](const model_key& m) { return now - m.last >= passivate_idle; });
        if (trim_idle > 0)
          to_trim = oldest_first([&](const model_key& m) {
            return !m.trimmed && now - m.last >= trim_idle && (passivate_idle == 0 || now - m.last < passivate_idle);
          });
        s.sweep(now, passivate_idle, trim_idle, p);
        std::vector<std::string> got;
        for (const auto& q : p.passivate) {
          got.push_back(q.key);
          CHECK(q.why == "idle");
          CHECK(q.only_if_idle);
        }
        CHECK(got == to_passivate);
        CHECK(p.trim == to_trim);
        for (const auto& k : to_trim) live[k].trimmed = true;
        apply(p);
      }
      std::size_t trimmed = 0;
      for (const auto& [k, m] : live) trimmed += m.trimmed;
      INFO("seed " << seed << " step " << step);
      REQUIRE(s.counts().live == live.size() + passivating.size());  // live_ counts a passivation until it ends
      REQUIRE(s.counts().trimmed == trimmed);
    }
  }
}
