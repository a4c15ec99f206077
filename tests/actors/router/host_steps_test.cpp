// host_steps on CAF's test coordinator: a settle asks the relay, the commit log and the bus in
// that order, each only once the one before answered (or failed), and answers with the relay's
// report; a tick asks the timers, the relay and the bus the same way and names the first that
// failed. The actors asked are stand-ins that log what they were asked, in one list.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/router/host_steps.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

using release_atom = caf::atom_constant<caf::atom("release")>;
using asked_list = std::shared_ptr<std::vector<std::string>>;

// Logs "<name>:<what>" for each request and answers as the actor it stands in for: a settle
// with a report (the relay: 7 sessions), true (the commit log) or nothing (the bus). The
// relay's settle and a store's get are answered at once, or (hold) only once it gets (release).
enum class role { relay, log, bus, timers, store, maintenance };

caf::behavior stand_in(caf::event_based_actor* self, std::string name, role as, asked_list asked, bool hold,
                       std::shared_ptr<bool> pass_due) {
  auto held = std::make_shared<std::vector<std::function<void()>>>();
  auto report = [] {
    settle_report r;
    r.sessions = 7;
    return r;
  };
  return {
      [=](settle_atom) -> caf::result<caf::message> {
        asked->push_back(name + ":settle");
        if (as == role::log) return caf::make_message(true);
        if (as != role::relay) return caf::make_message();
        if (!hold) return caf::make_message(report());
        held->push_back([rp = self->make_response_promise(), report]() mutable { rp.deliver(report()); });
        return caf::delegated<caf::message>();
      },
      [=](tick_atom) { asked->push_back(name + ":tick"); },
      [=](tick_atom, settle_atom) {
        asked->push_back(name + ":tick-settle");
        return as == role::maintenance ? *pass_due : true;  // the relay: swept
      },
      [=](get_atom, const std::string&) -> caf::result<entry_reply> {
        asked->push_back(name + ":get");
        if (!hold) return entry_reply{};
        held->push_back([rp = self->make_response_promise()]() mutable { rp.deliver(entry_reply{}); });
        return caf::delegated<entry_reply>();
      },
      [=](chat_atom) { asked->push_back(name + ":chat"); },
      [=](release_atom) {
        for (auto& answer : *held) answer();
        held->clear();
      },
  };
}

// Sends the host's request and keeps what came back.
struct answers {
  std::vector<settle_report> reports;
  std::vector<std::vector<std::string>> failures;
  std::vector<std::string> tick_failures;
  std::vector<bool> ran;
  std::vector<std::string> maintain_failures;
};

caf::behavior host(caf::event_based_actor* self, host_steps_type steps, std::shared_ptr<answers> got) {
  return {
      [=](settle_atom) {
        self->request(steps, caf::infinite, settle_atom::value)
            .then([got](settle_report& r, std::vector<std::string>& f) {
              got->reports.push_back(r);
              got->failures.push_back(f);
            });
      },
      [=](tick_atom) {
        self->request(steps, caf::infinite, tick_atom::value).then([got](std::string& f) { got->tick_failures.push_back(f); });
      },
      [=](maintain_atom) {
        self->request(steps, caf::infinite, maintain_atom::value).then([got](bool ran, std::string& f) {
          got->ran.push_back(ran);
          got->maintain_failures.push_back(f);
        });
      },
  };
}

struct harness {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  asked_list asked = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<answers> got = std::make_shared<answers>();
  caf::actor relay, log, bus, timers, store_a, store_b, maintenance, client;
  std::shared_ptr<bool> pass_due = std::make_shared<bool>(false);
  host_steps_type steps;

  explicit harness(bool hold_relay = false, bool with_log = true, bool hold_store_a = false) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    relay = sys->spawn(stand_in, "relay", role::relay, asked, hold_relay, pass_due);
    if (with_log) log = sys->spawn(stand_in, "log", role::log, asked, false, pass_due);
    bus = sys->spawn(stand_in, "bus", role::bus, asked, false, pass_due);
    timers = sys->spawn(stand_in, "timers", role::timers, asked, false, pass_due);
    store_a = sys->spawn(stand_in, "store a", role::store, asked, hold_store_a, pass_due);
    store_b = sys->spawn(stand_in, "store b", role::store, asked, false, pass_due);
    maintenance = sys->spawn(stand_in, "maintenance", role::maintenance, asked, false, pass_due);
    host_steps_links l;
    l.relay = caf::actor_cast<outcome_relay_type>(relay);
    if (with_log) l.commit_log = caf::actor_cast<commit_log_actor>(log);
    l.bus = caf::actor_cast<event_bus_actor>(bus);
    l.timers = caf::actor_cast<timer_actor_type>(timers);
    l.stores = {{"a", caf::actor_cast<store_actor_type>(store_a)}, {"b", caf::actor_cast<store_actor_type>(store_b)}};
    l.maintenance = caf::actor_cast<maintenance_actor_type>(maintenance);
    l.relay_wait = caf::infinite;
    steps = sys->spawn(host_steps, l);
    client = sys->spawn(host, steps, got);
    sched->run();
  }
  ~harness() {
    for (const caf::actor& a : {relay, log, bus, timers, store_a, store_b, maintenance, client})
      if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(steps, caf::exit_reason::user_shutdown);
    sched->run();
  }
  void kill(caf::actor& a) {
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }
  std::vector<std::string> taken() {
    auto out = *asked;
    asked->clear();
    return out;
  }
};

using list = std::vector<std::string>;

}  // namespace

TEST_CASE("host_steps: a settle asks the relay (behind what the host sent it), the commit log, the bus, in turn", "[host_steps]") {
  harness h;
  caf::anon_send(h.relay, chat_atom::value);  // the host's turn, sent before it settles
  caf::anon_send(h.client, settle_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"relay:chat", "relay:settle", "log:settle", "bus:settle"});
  REQUIRE(h.got->reports.size() == 1);
  CHECK(h.got->reports[0].sessions == 7);
  CHECK(h.got->failures[0].empty());
}

TEST_CASE("host_steps: the commit log is asked only once the relay answered", "[host_steps]") {
  harness h(/*hold_relay=*/true);
  caf::anon_send(h.client, settle_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"relay:settle"});
  CHECK(h.got->reports.empty());
  caf::anon_send(h.relay, release_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"log:settle", "bus:settle"});
  REQUIRE(h.got->reports.size() == 1);
  CHECK(h.got->reports[0].sessions == 7);
}

TEST_CASE("host_steps: without a commit log a settle asks the relay and the bus", "[host_steps]") {
  harness h(false, /*with_log=*/false);
  caf::anon_send(h.client, settle_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"relay:settle", "bus:settle"});
  CHECK(h.got->reports.size() == 1);
}

TEST_CASE("host_steps: a relay that does not answer is named, the commit log and the bus are still asked", "[host_steps]") {
  harness h;
  h.kill(h.relay);
  caf::anon_send(h.client, settle_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"log:settle", "bus:settle"});
  REQUIRE(h.got->failures.size() == 1);
  REQUIRE(h.got->failures[0].size() == 1);
  CHECK(h.got->failures[0][0].rfind("the router: ", 0) == 0);
  CHECK(h.got->reports[0].sessions == 0);  // no report: the empty one
}

TEST_CASE("host_steps: a tick asks the timers, the relay, the bus in turn", "[host_steps]") {
  harness h;
  caf::anon_send(h.client, tick_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"timers:tick", "relay:tick-settle", "bus:settle"});
  CHECK(h.got->tick_failures == list{""});
}

TEST_CASE("host_steps: a tick names the first actor that does not answer and still asks the others", "[host_steps]") {
  SECTION("the timers") {
    harness h;
    h.kill(h.timers);
    caf::anon_send(h.client, tick_atom::value);
    h.sched->run();
    CHECK(h.taken() == list{"relay:tick-settle", "bus:settle"});
    REQUIRE(h.got->tick_failures.size() == 1);
    CHECK(h.got->tick_failures[0].rfind("the timers: ", 0) == 0);
  }
  SECTION("the relay, then the bus: the first is named") {
    harness h;
    h.kill(h.relay);
    h.kill(h.bus);
    caf::anon_send(h.client, tick_atom::value);
    h.sched->run();
    CHECK(h.taken() == list{"timers:tick"});
    REQUIRE(h.got->tick_failures.size() == 1);
    CHECK(h.got->tick_failures[0].rfind("the router: ", 0) == 0);
  }
}

TEST_CASE("host_steps: a maintenance step reads each store, then runs the pass, then settles the bus if one ran", "[host_steps]") {
  harness h;
  SECTION("a pass was due") {
    *h.pass_due = true;
    caf::anon_send(h.client, maintain_atom::value);
    h.sched->run();
    CHECK(h.taken() == list{"store a:get", "store b:get", "maintenance:tick-settle", "bus:settle"});
    CHECK(h.got->ran == std::vector<bool>{true});
    CHECK(h.got->maintain_failures == list{""});
  }
  SECTION("none was due: the bus is not asked") {
    caf::anon_send(h.client, maintain_atom::value);
    h.sched->run();
    CHECK(h.taken() == list{"store a:get", "store b:get", "maintenance:tick-settle"});
    CHECK(h.got->ran == std::vector<bool>{false});
  }
  SECTION("a store that does not answer is named; the others and the pass are still asked") {
    *h.pass_due = true;
    h.kill(h.store_a);
    caf::anon_send(h.client, maintain_atom::value);
    h.sched->run();
    CHECK(h.taken() == list{"store b:get", "maintenance:tick-settle", "bus:settle"});
    REQUIRE(h.got->maintain_failures.size() == 1);
    CHECK(h.got->maintain_failures[0].rfind("a store: ", 0) == 0);
  }
}

TEST_CASE("host_steps: the maintenance pass is asked only once every store answered its read", "[host_steps]") {
  harness h(false, true, /*hold_store_a=*/true);
  caf::anon_send(h.client, maintain_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"store a:get"});
  caf::anon_send(h.store_a, release_atom::value);
  h.sched->run();
  CHECK(h.taken() == list{"store b:get", "maintenance:tick-settle"});
  CHECK(h.got->ran == std::vector<bool>{false});
}
