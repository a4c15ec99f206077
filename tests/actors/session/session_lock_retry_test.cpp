// The session actor when another process holds its transcript's write lock: the turn is
// retried with storage's backoff through delayed messages (CAF's test coordinator: virtual
// time, no thread ever waits), fails with storage's timeout error once the acquire timeout is
// reached, fails at once on a final lock error (a stale lock that cannot be removed), and
// completes when the holder goes away while it waits.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "actors/caf_types.hpp"
#include "actors/events/event_bus.hpp"
#include "actors/session/session_actor.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"
#include "storage/session_paths.hpp"
#include "storage/write_lock.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
constexpr std::int64_t kHolderPid = 777;
const std::string kSessionId = "0a1b2c3d-0000-4000-8000-000000000001";

class fixed_model final : public model_runner {
 public:
  int calls = 0;
  result<boost::json::object> run(const model_request&) override {
    ++calls;
    assistant_fields a;
    a.content.push_back(text_block("ok"));
    a.model = "fixed";
    a.usage.input = 10;
    a.usage.output = 1;
    a.timestamp_ms = kT0;
    return assistant_message(std::move(a));
  }
};

// What another process writes into its lock file.
std::string holder_payload(std::int64_t created_ms) {
  boost::json::object o;
  o["pid"] = kHolderPid;
  o["createdAt"] = format_iso_ms(created_ms);
  o["maxHoldMs"] = 100000000;
  o["starttime"] = 5;
  return json::to_pretty(o) + "\n";
}

struct harness {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  storage::fake_process_probe probe;  // this process: pid 4242
  runtime_settings settings;
  fixed_model model;
  testing::inline_runner runner{model};
  std::string sessions_dir = dir.file("sessions");
  std::string lock_path;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<event_hub> hub = std::make_shared<event_hub>();
  std::vector<lifecycle_event> events;  // delivered by the bus (the test coordinator runs one actor at a time)
  std::vector<caf::actor> spawned;
  caf::actor session;
  std::shared_ptr<std::optional<turn_outcome>> outcome = std::make_shared<std::optional<turn_outcome>>();

  explicit harness(std::int64_t acquire_timeout_ms) {
    settings.session.write_lock.acquire_timeout_ms = acquire_timeout_ms;
    settings.storage.durability = storage::durability::none;
    settings.session.reset.timezone = "UTC";
    probe.set_process(kHolderPid, 5);
    REQUIRE(storage::ensure_dir(storage::posix_fs(), sessions_dir, 0700).ok());
    auto transcript = storage::transcript_path(sessions_dir, kSessionId);
    REQUIRE(transcript.ok());
    auto lp = storage::write_lock_path(storage::posix_fs(), *transcript);
    REQUIRE(lp.ok());
    lock_path = *lp;

    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    hub->subscribe({}, [this](const lifecycle_event& e) { events.push_back(e); });
  }

  ~harness() {
    for (auto& a : spawned) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched->run();
  }

  // Stands in for the store, the syncer and the timers: takes every message, answers a durable
  // put with true. (caf::drop would answer an unexpected message with an error, which ends the
  // session actor.)
  caf::actor sink_actor() {
    // (An argument: CAF 0.17 dereferences a null argument tuple for argument-less spawns.)
    auto a = sys->spawn([](caf::event_based_actor* self, int) -> caf::behavior {
      self->set_default_handler([](caf::scheduled_actor*, caf::message_view&) -> caf::result<caf::message> {
        return caf::message{};
      });
      return {[](put_atom, const std::string&, const session_entry&, flush_atom) { return true; },
              [](put_atom, const std::string&, const std::string&, flush_atom) { return true; }};
    }, 0);
    spawned.push_back(a);
    return a;
  }

  void start() {
    session_core_deps core;
    core.files = &storage::posix_fs();
    core.time = &clk;
    core.probe = &probe;
    core.settings = &settings;
    core.sessions_dir = sessions_dir;
    core.agent_id = "main";
    core.wants_event = [h = hub](std::string_view type) { return h->wants(type); };
    session_actor_deps deps;
    deps.core = std::make_shared<const session_core_deps>(std::move(core));
    // (The sinks are dynamically typed: cast to the handles the session expects.)
    deps.store = caf::actor_cast<store_actor_type>(sink_actor());
    deps.commit_log = caf::actor_cast<commit_log_actor>(sink_actor());
    deps.timers = caf::actor_cast<timer_actor_type>(sink_actor());
    deps.bus = sys->spawn(event_bus, hub);
    spawned.push_back(caf::actor_cast<caf::actor>(deps.bus));
    deps.hub = hub;
    deps.runner = &runner;
    entry_reply row;
    row.found = true;
    row.entry.set_session_id(kSessionId);
    row.entry.set_updated_at(kT0 - 1000);
    session = caf::actor_cast<caf::actor>(spawn_session_actor(*sys, std::string("agent:main:main"), std::move(row),
                                                     std::make_shared<const session_actor_deps>(std::move(deps))));
    spawned.push_back(session);
    sched->run();
  }

  void send_turn(const std::string& text) {
    outcome->reset();
    route_facts route;
    route.channel = "telegram";
    route.peer_id = "1";
    // A client asks, as the router does, and keeps the answer.
    auto client = sys->spawn(
        [](caf::event_based_actor* self, caf::actor session, std::shared_ptr<std::optional<turn_outcome>> o) {
          return caf::behavior{[self, session, o](chat_atom, chat_event& ev, route_facts& route) {
            self->request(session, caf::infinite, chat_atom::value, std::make_shared<chat_event>(std::move(ev)),
                          std::move(route))
                .then([o](turn_outcome& out) { *o = std::move(out); });
          }};
        },
        session, outcome);
    spawned.push_back(client);
    caf::anon_send(client, chat_atom::value, testing::dm("1", text), route);
    sched->run();
  }

  // Fires the next delayed message (a lock retry) and returns the virtual ms it waited for.
  std::int64_t fire_next_retry() {
    const auto before = sched->clock().current_time;
    REQUIRE(sched->trigger_timeout());
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(sched->clock().current_time - before);
    sched->run();
    return waited.count();
  }

  std::size_t count(std::string_view type) const {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [&](const lifecycle_event& e) { return e.type == type; }));
  }
};

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a busy transcript lock: the turn waits storage's backoff, then fails with the timeout error once") {
  harness h(1000);
  const std::string planted = holder_payload(kT0 - 5);
  testing::write_text(h.lock_path, planted);
  h.start();
  h.send_turn("hello");

  std::vector<std::int64_t> waits;
  while (!h.outcome->has_value() && h.sched->has_pending_timeout()) waits.push_back(h.fire_next_retry());
  REQUIRE(h.outcome->has_value());
  // 50 ms growing by 50 ms per attempt, the last wait cut to end at the 1000 ms timeout.
  CHECK(waits == std::vector<std::int64_t>{50, 100, 150, 200, 250, 250});
  const status& st = (**h.outcome).st;
  CHECK(st.code() == errc::locked);
  CHECK(st.message() ==
        fmt::format("session file locked (timeout 1000ms): pid=777 alive=true ageMs=5 {}", h.lock_path));
  CHECK(occurrences(st.message(), "session file locked") == 1);
  CHECK_FALSE(h.sched->has_pending_timeout());  // no retry left behind
  CHECK(h.count("lock.contended") == 7);         // one per attempt, as before
  CHECK(h.model.calls == 0);
  CHECK(h.clk.now_ms() == kT0);  // nothing slept on the session's clock: the actor never blocked
  CHECK(testing::read_text(h.lock_path) == planted);
}

TEST_CASE("a stale lock that cannot be removed fails the turn at once, without retries") {
  harness h(60000);
  // A live holder whose lock is older than staleMs: "too-old" is report-only, storage's error
  // is final.
  const std::int64_t created = kT0 - h.settings.session.write_lock.stale_ms - 1;
  const std::string planted = holder_payload(created);
  testing::write_text(h.lock_path, planted);
  h.start();
  h.send_turn("hello");

  REQUIRE(h.outcome->has_value());  // answered by the first attempt, no retry was scheduled
  CHECK_FALSE(h.sched->has_pending_timeout());
  const status& st = (**h.outcome).st;
  CHECK(st.code() == errc::locked);
  CHECK(st.message() == fmt::format("session file lock stale (too-old): pid=777 alive=true ageMs={} {}",
                                    kT0 - created, h.lock_path));
  CHECK(h.count("lock.contended") == 1);
  CHECK(h.model.calls == 0);
  CHECK(testing::read_text(h.lock_path) == planted);
}

TEST_CASE("the lock holder goes away while the turn waits: the next retry takes the lock and the turn completes") {
  harness h(60000);
  testing::write_text(h.lock_path, holder_payload(kT0 - 5));
  h.start();
  h.send_turn("hello");
  REQUIRE_FALSE(h.outcome->has_value());
  CHECK(h.fire_next_retry() == 50);
  REQUIRE_FALSE(h.outcome->has_value());
  h.probe.remove_process(kHolderPid);  // the other process exits without removing its lock
  CHECK(h.fire_next_retry() == 100);
  REQUIRE(h.outcome->has_value());
  INFO((**h.outcome).st.to_string());
  CHECK((**h.outcome).st.ok());
  CHECK((**h.outcome).reply == std::optional<std::string>("ok"));
  CHECK(h.model.calls == 1);
  CHECK_FALSE(h.sched->has_pending_timeout());
  CHECK(h.count("lock.contended") == 3);  // busy, busy, dead-pid removed
  CHECK((**h.outcome).session_id == kSessionId);
  CHECK_FALSE((**h.outcome).new_session);
  CHECK(testing::read_text(h.lock_path).find("\"pid\": 4242") != std::string::npos);  // ours now
}
