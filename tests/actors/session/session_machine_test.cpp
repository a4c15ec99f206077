// session_machine without CAF and without threads: a manual_clock, a memory_fs, and a call
// port the test answers by hand. Each input's plan is carried out as the actor would (replies
// to their sinks, events collected) and kept for the checks: the queue modes, /stop, /status
// and /new while a turn runs, the write lock's retry, the debounce, the acks that wait for the
// store or the commit log, the row fetched after a trim, and passivation.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/session/session_machine.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "messages/transcript_entry.hpp"
#include "storage/durable_file.hpp"
#include "storage/memory_fs.hpp"
#include "storage/session_paths.hpp"
#include "storage/write_lock.hpp"
#include "tests/actors/session/turn_driver.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00.000Z
const std::string kKey = "agent:main:main";
const std::string kSessions = "/state/agents/main/sessions";
const std::string kSessionId = "0a1b2c3d-0000-4000-8000-000000000001";
constexpr std::int64_t kHolderPid = 777;

// Model calls as the machine hands them over; the test answers them through the machine.
class test_port final : public call_port {
 public:
  struct call {
    std::uint64_t id = 0;
    std::shared_ptr<model_request> request;
    std::shared_ptr<cancellation> cancel;
  };
  std::vector<call> calls;
  std::vector<std::uint64_t> ended;
  bool steering = false;

  bool has_runner() const override { return true; }
  bool steering_supported() const override { return steering; }
  std::optional<model_answer> start_model(std::uint64_t id, std::shared_ptr<model_request> request, streams,
                                          std::shared_ptr<cancellation> cancel) override {
    calls.push_back({id, std::move(request), std::move(cancel)});
    return std::nullopt;
  }
  std::optional<model_answer> launch(std::uint64_t) override { return std::nullopt; }
  bool can_summarize() const override { return false; }
  void start_summary(std::uint64_t, std::shared_ptr<compaction_provider>, std::shared_ptr<summarize_request>,
                     std::shared_ptr<cancellation>) override {}
  void end(std::uint64_t id) override { ended.push_back(id); }
};

model_answer reply_of(const std::string& text) {
  assistant_fields a;
  a.content.push_back(text_block(text));
  a.model = "m";
  a.usage.input = 10;
  a.usage.output = 1;
  a.timestamp_ms = kT0;
  return assistant_message(std::move(a));
}

// The text the model was sent last in a call (the user's message, with any runtime prefix).
std::string last_user_text(const test_port::call& c) {
  const auto& last = c.request->messages.back().as_object();
  if (auto s = json::get_string(last, "content")) return std::string(*s);
  std::string out;
  for (const auto& b : last.at("content").as_array())
    if (auto t = json::get_string(b.as_object(), "text")) out += *t;
  return out;
}

struct harness {
  manual_clock clk{kT0};
  storage::memory_fs files{clk};
  storage::fake_process_probe probe;  // this process: pid 4242
  runtime_settings settings;
  test_port port;
  std::unique_ptr<session_machine> m;
  std::map<std::string, std::vector<turn_outcome>> answers;  // by sender
  std::vector<lifecycle_event> events;
  session_plan last;  // the last input's plan
  int quits = 0;

  harness() {
    settings.storage.durability = storage::durability::none;
    settings.session.reset.timezone = "UTC";
    REQUIRE(storage::ensure_dir(files, kSessions, 0700).ok());
  }

  void start(session_machine::options opts = {}, std::optional<session_entry> row = std::nullopt) {
    session_core_deps d;
    d.files = &files;
    d.time = &clk;
    d.probe = &probe;
    d.settings = &settings;
    d.sessions_dir = kSessions;
    d.agent_id = "main";
    m = std::make_unique<session_machine>(kKey, std::move(row), std::make_shared<const session_core_deps>(std::move(d)),
                                          port, opts);
  }

  // What the actor would do with the plan's replies and events; the plan is kept in `last`.
  const session_plan& go(session_plan p) {
    for (auto& s : p.steps) {
      if (auto* r = std::get_if<plan_reply>(&s)) r->sink(r->outcome);
      if (auto* e = std::get_if<plan_publish>(&s)) events.push_back(e->event);
      if (std::holds_alternative<plan_quit>(s)) ++quits;
    }
    last = std::move(p);
    return last;
  }
  outcome_fn sink(const std::string& who) {
    return [this, who](turn_outcome out) { answers[who].push_back(std::move(out)); };
  }
  const session_plan& chat(const std::string& who, const std::string& text) {
    return go(m->chat(std::make_shared<chat_event>(testing::dm("1", text)), testing::direct_route(), sink(who)));
  }
  const session_plan& answer(std::size_t call, const std::string& text) {
    return go(m->model_answered(port.calls.at(call).id, reply_of(text)));
  }
  const turn_outcome& only(const std::string& who) {
    REQUIRE(answers[who].size() == 1);
    return answers[who][0];
  }
  std::size_t count(std::string_view type) const {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [&](const lifecycle_event& e) { return e.type == type; }));
  }
  std::string lock_path() {
    auto transcript = storage::transcript_path(kSessions, kSessionId);
    REQUIRE(transcript.ok());
    auto lp = storage::write_lock_path(files, *transcript);
    REQUIRE(lp.ok());
    return *lp;
  }
};

session_entry existing_row() {
  session_entry row;
  row.set_session_id(kSessionId);
  row.set_updated_at(kT0 - 1000);
  return row;
}

// What another process writes into its lock file.
std::string holder_payload(std::int64_t created_ms) {
  boost::json::object o;
  o["pid"] = kHolderPid;
  o["createdAt"] = format_iso_ms(created_ms);
  o["maxHoldMs"] = 100000000;
  o["starttime"] = 5;
  return json::to_pretty(o) + "\n";
}

}  // namespace

TEST_CASE("session_machine: followup runs what arrived during a turn afterwards, in order, one call at a time") {
  harness h;
  h.start();
  h.chat("a", "one");
  REQUIRE(h.port.calls.size() == 1);
  CHECK_FALSE(h.m->idle());
  h.chat("b", "two");
  CHECK(h.count(event_types::turn_queued) == 1);
  CHECK(h.port.calls.size() == 1);  // waits for the running turn
  CHECK(h.answers.empty());

  h.answer(0, "r1");
  CHECK(h.only("a").reply == std::optional<std::string>("r1"));
  REQUIRE(h.port.calls.size() == 2);  // the follow-up started as the first ended
  CHECK(last_user_text(h.port.calls[1]) == "two");
  CHECK(h.port.ended == std::vector<std::uint64_t>{h.port.calls[0].id});
  h.answer(1, "r2");
  CHECK(h.only("b").reply == std::optional<std::string>("r2"));
  CHECK(h.m->idle());
  // The reply goes after the turn's events, which include the row's store put.
  const auto& steps = h.last.steps;
  REQUIRE_FALSE(steps.empty());
  CHECK(std::holds_alternative<plan_reply>(steps.back()));
  CHECK(h.last.all<plan_put>().size() == 1);
}

TEST_CASE("session_machine: collect makes the messages that arrived during a turn one follow-up, every sender answered") {
  harness h;
  h.settings.queue.mode = queue_mode::collect;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  h.chat("c", "three");
  h.answer(0, "r1");
  REQUIRE(h.port.calls.size() == 2);
  CHECK(last_user_text(h.port.calls[1]) == "two\n\nthree");
  h.answer(1, "r2");
  CHECK(h.only("b").reply == std::optional<std::string>("r2"));
  CHECK(h.only("c").reply == std::optional<std::string>("r2"));
}

TEST_CASE("session_machine: interrupt cancels the running call and runs the new message") {
  harness h;
  h.settings.queue.mode = queue_mode::interrupt;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  CHECK(h.port.calls[0].cancel->cancelled());
  CHECK(h.port.ended == std::vector<std::uint64_t>{h.port.calls[0].id});
  CHECK(h.only("a").st.code() == errc::cancelled);
  REQUIRE(h.port.calls.size() == 2);
  CHECK(last_user_text(h.port.calls[1]) == "two");
  // The cancelled call's late answer is not heard.
  h.go(h.m->model_answered(h.port.calls[0].id, reply_of("late")));
  CHECK(h.answers["b"].empty());
  h.answer(1, "r2");
  CHECK(h.only("b").reply == std::optional<std::string>("r2"));
}

TEST_CASE("session_machine: past messages.queue.cap, drop new refuses the arriving message") {
  harness h;
  h.settings.queue.cap = 1;
  h.settings.queue.drop = queue_drop::new_first;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  h.chat("c", "three");
  CHECK(h.only("c").st.code() == errc::limit_exceeded);
  CHECK(h.only("c").st.message() == "dropped: 1 messages were already waiting (messages.queue.cap 1, drop new)");
  CHECK(h.answers["b"].empty());
}

TEST_CASE("session_machine: steer hands a message to the running call, and its sender gets that turn's outcome") {
  harness h;
  h.settings.queue.mode = queue_mode::steer;
  h.port.steering = true;
  h.start();
  h.chat("a", "one");
  REQUIRE(h.port.calls[0].request->steering);
  h.chat("b", "steered");
  CHECK(h.count(event_types::turn_queued) == 0);
  CHECK(h.port.calls[0].request->steering->take() == std::vector<std::string>{"steered"});  // the runner takes it
  h.answer(0, "r1");
  CHECK(h.only("a").reply == std::optional<std::string>("r1"));
  CHECK(h.only("b").reply == std::optional<std::string>("r1"));
  CHECK(h.port.calls.size() == 1);  // nothing left to run
}

TEST_CASE("session_machine: /stop cancels the running turn and drops what waits, with nothing running it says so") {
  harness h;
  h.start();
  h.chat("s0", "/stop");
  CHECK(h.only("s0").command_output == "Nothing is running.");
  CHECK(h.port.calls.empty());

  h.chat("a", "one");
  h.chat("b", "two");
  h.chat("c", "three");
  h.go(h.m->system(system_event{}, h.sink("sys")));  // a system event waits too, and stays
  h.chat("s1", "/stop");
  CHECK(h.port.calls[0].cancel->cancelled());
  CHECK(h.only("a").st.code() == errc::cancelled);
  CHECK(h.only("b").st.message() == "dropped by /stop");
  CHECK(h.only("c").st.code() == errc::cancelled);
  CHECK(h.only("s1").command == "/stop");
  CHECK(h.only("s1").command_output == "Stopped the running turn; 2 waiting message(s) dropped.");
  CHECK(h.only("sys").st.ok());  // the system event ran after the cancelled turn
  CHECK(h.port.calls.size() == 1);
  CHECK(h.m->idle());
}

TEST_CASE("session_machine: /status is answered while a turn runs, /new cancels it and runs next, ahead of what waits") {
  harness h;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  h.chat("s", "/status");
  CHECK(h.only("s").command == "/status");
  CHECK(h.only("s").command_output.find("A turn is running. 1 message(s) wait (followup).") != std::string::npos);
  CHECK(h.port.calls.size() == 1);

  h.chat("n", "/new");
  CHECK(h.port.calls[0].cancel->cancelled());
  CHECK(h.only("a").st.code() == errc::cancelled);
  CHECK(h.only("n").command == "/new");  // ran at once as the next turn (no model call)
  CHECK(h.only("n").new_session);
  REQUIRE(h.port.calls.size() == 2);
  CHECK(last_user_text(h.port.calls[1]) == "two");  // then what waited
}

TEST_CASE("session_machine: a call past model.timeoutMs fails its turn naming the limit, the next turn runs") {
  harness h;
  h.settings.model.timeout_ms = 5000;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  h.go(h.m->timed_out(h.port.calls[0].id));
  CHECK(h.port.calls[0].cancel->cancelled());
  CHECK(h.only("a").st.code() == errc::timeout);
  CHECK(h.only("a").st.message().find("model.timeoutMs (5000 ms)") != std::string::npos);
  REQUIRE(h.port.calls.size() == 2);
  h.go(h.m->timed_out(h.port.calls[0].id));  // a stale alarm does nothing
  CHECK(h.answers["b"].empty());
}

TEST_CASE("session_machine: a busy write lock is retried with storage's backoff, what arrives waits, the turn runs once it is free") {
  harness h;
  h.settings.session.write_lock.acquire_timeout_ms = 60000;
  h.probe.set_process(kHolderPid, 5);
  h.start({}, existing_row());
  REQUIRE(storage::replace_file_atomic(h.files, h.lock_path(), holder_payload(kT0 - 5)).ok());
  h.chat("a", "hello");
  REQUIRE(h.last.all<plan_retry>().size() == 1);
  CHECK(h.last.all<plan_retry>()[0]->after_ms == 50);
  CHECK(h.answers.empty());
  CHECK_FALSE(h.m->idle());
  CHECK(h.m->wait().lock_retry);  // a real-time backoff: the simulator waits for it
  h.chat("b", "later");  // waits behind the lock wait, uncapped
  CHECK(h.port.calls.empty());
  h.go(h.m->retry());
  REQUIRE(h.last.all<plan_retry>().size() == 1);
  CHECK(h.last.all<plan_retry>()[0]->after_ms == 100);
  h.probe.remove_process(kHolderPid);  // the holder exits without removing its lock
  h.go(h.m->retry());
  CHECK(h.last.all<plan_retry>().empty());
  CHECK_FALSE(h.m->wait().lock_retry);
  REQUIRE(h.port.calls.size() == 1);
  CHECK(last_user_text(h.port.calls[0]) == "hello");
  h.answer(0, "ok");
  CHECK(h.only("a").reply == std::optional<std::string>("ok"));
  REQUIRE(h.port.calls.size() == 2);
  CHECK(last_user_text(h.port.calls[1]) == "later");
  CHECK(h.count("lock.contended") == 3);  // busy, busy, dead pid removed
}

TEST_CASE("session_machine: a lock held past writeLock.acquireTimeoutMs fails the turn with storage's timeout error") {
  harness h;
  h.settings.session.write_lock.acquire_timeout_ms = 1000;
  h.probe.set_process(kHolderPid, 5);
  h.start({}, existing_row());
  REQUIRE(storage::replace_file_atomic(h.files, h.lock_path(), holder_payload(kT0 - 5)).ok());
  h.chat("a", "hello");
  std::vector<std::int64_t> waits;
  while (!h.last.all<plan_retry>().empty()) {
    waits.push_back(h.last.all<plan_retry>()[0]->after_ms);
    h.go(h.m->retry());
  }
  CHECK(waits == std::vector<std::int64_t>{50, 100, 150, 200, 250, 250});
  CHECK(h.only("a").st.code() == errc::locked);
  CHECK(h.only("a").st.message().rfind("session file locked (timeout 1000ms): pid=777", 0) == 0);
  CHECK(h.port.calls.empty());
  CHECK(h.m->idle());
}

TEST_CASE("session_machine: with a debounce the follow-up waits for quiet after the last arrival") {
  harness h;
  h.settings.queue.debounce_ms = 1000;
  session_machine::options opts;
  opts.alarms = true;
  h.start(opts);
  h.chat("a", "one");
  h.clk.advance(100);
  h.chat("b", "two");
  h.clk.advance(100);
  h.answer(0, "r1");
  REQUIRE(h.last.all<plan_wake>().size() == 1);
  CHECK(h.last.all<plan_wake>()[0]->at_ms == kT0 + 1100);
  CHECK(h.port.calls.size() == 1);
  CHECK_FALSE(h.m->idle());
  h.clk.set(kT0 + 1100);
  h.go(h.m->wake());
  REQUIRE(h.port.calls.size() == 2);
  CHECK(last_user_text(h.port.calls[1]) == "two");

  // Without alarms there is no debounce: the follow-up starts at once.
  harness n;
  n.settings.queue.debounce_ms = 1000;
  n.start();
  n.chat("a", "one");
  n.chat("b", "two");
  n.answer(0, "r1");
  CHECK(n.port.calls.size() == 2);
}

TEST_CASE("session_machine: storeDurableAck holds the reply until the store answers, a failed write fails it") {
  harness h;
  h.settings.storage.store_durable_ack = true;
  h.start();
  h.chat("a", "one");
  h.answer(0, "r1");
  REQUIRE(h.last.all<plan_put>().size() == 1);
  CHECK(h.last.all<plan_put>()[0]->durable);
  CHECK(h.answers["a"].empty());
  h.go(h.m->stored(""));
  CHECK(h.only("a").reply == std::optional<std::string>("r1"));

  h.chat("b", "two");
  h.answer(1, "r2");
  h.go(h.m->stored("disk full"));
  CHECK(h.only("b").st.code() == errc::io_error);
  CHECK(h.only("b").st.message() == "saving the session row failed: disk full");
}

TEST_CASE("session_machine: durability batch sends the user's line while the model runs, the ack waits for the log") {
  harness h;
  h.settings.storage.durability = storage::durability::batch;
  session_machine::options opts;
  opts.commit_log = true;
  h.start(opts);
  h.chat("a", "one");
  REQUIRE(h.port.calls.size() == 1);
  REQUIRE(h.last.all<plan_log>().size() == 1);  // the user's line, before the model answers
  CHECK(h.last.all<plan_log>()[0]->append.bytes.find("\"one\"") != std::string::npos);
  h.answer(0, "r1");
  REQUIRE(h.last.all<plan_log>().size() == 1);  // the turn's record, with its row
  const commit_log_append& rec = h.last.all<plan_log>()[0]->append;
  CHECK(rec.rows.size() == 1);
  CHECK(h.last.all<plan_put>().empty());  // the row rides with the record
  CHECK(h.answers["a"].empty());
  h.go(h.m->synced(h.m->core().transcript_file_id(), rec.seq - 1, ""));
  CHECK(h.answers["a"].empty());  // an earlier seq does not cover the turn
  h.go(h.m->synced(h.m->core().transcript_file_id(), rec.seq, ""));
  CHECK(h.only("a").reply == std::optional<std::string>("r1"));
}

TEST_CASE("session_machine: after a trim the next turn waits for the row from the store, or fails if it cannot be read") {
  harness h;
  h.start();
  h.chat("a", "one");
  h.answer(0, "r1");
  const session_entry row = *h.m->core().entry();
  h.go(h.m->trim());
  REQUIRE(h.m->core().needs_row());
  h.chat("b", "two");
  CHECK(h.last.all<plan_fetch_row>().size() == 1);
  CHECK(h.port.calls.size() == 1);
  CHECK_FALSE(h.m->idle());
  h.go(h.m->row_fetched(row, ""));
  REQUIRE(h.port.calls.size() == 2);
  h.answer(1, "r2");
  CHECK(h.only("b").session_id == row.session_id().value_or(""));

  h.go(h.m->trim());
  h.chat("c", "three");
  h.go(h.m->row_fetched(std::nullopt, "the session row cannot be read: EIO"));
  CHECK(h.only("c").st.code() == errc::io_error);
  CHECK(h.only("c").st.message() == "the session row cannot be read: EIO");
}

TEST_CASE("session_machine: passivation waits for the running turn and its reply, then closes and quits") {
  harness h;
  h.start({}, existing_row());
  h.chat("a", "one");
  const std::string lock = h.lock_path();
  REQUIRE(h.files.stat(lock).ok());  // the transcript's write lock is ours while the session lives
  h.go(h.m->passivate("lru"));
  CHECK(h.quits == 0);
  CHECK(h.count(event_types::session_passivated) == 0);
  h.answer(0, "r1");
  CHECK(h.only("a").reply == std::optional<std::string>("r1"));
  REQUIRE(h.quits == 1);
  // In this order: the reply, session.passivated, quit.
  const auto& steps = h.last.steps;
  REQUIRE(steps.size() >= 3);
  CHECK(std::holds_alternative<plan_quit>(steps[steps.size() - 1]));
  CHECK(std::get<plan_publish>(steps[steps.size() - 2]).event.type == event_types::session_passivated);
  CHECK(std::holds_alternative<plan_reply>(steps[steps.size() - 3]));
  CHECK_FALSE(h.files.stat(lock).ok());  // released
}

TEST_CASE("session_machine: passivate stop cancels the running turn and refuses what waits") {
  harness h;
  h.start();
  h.chat("a", "one");
  h.chat("b", "two");
  h.go(h.m->system(system_event{}, h.sink("sys")));
  h.go(h.m->passivate("stop"));
  CHECK(h.port.calls[0].cancel->cancelled());
  CHECK(h.only("a").st.code() == errc::cancelled);
  CHECK(h.only("b").st.message() == "the runtime is stopping");
  CHECK(h.only("sys").st.message() == "the runtime is stopping");
  // Once: the cancelled turn's ack released at once used to finish the passivation a second
  // time (two session.passivated events, two quits).
  CHECK(h.quits == 1);
  CHECK(h.count(event_types::session_passivated) == 1);
  CHECK(std::holds_alternative<plan_quit>(h.last.steps.back()));
  CHECK(h.port.calls.size() == 1);
}

TEST_CASE("session_machine: idle means no turn, no lock wait, no row fetch, no debounce and an empty queue") {
  harness h;
  h.start();
  CHECK(h.m->idle());
  h.go(h.m->passivate("idle"));
  CHECK(h.quits == 1);
  CHECK(h.count(event_types::session_passivated) == 1);
}

// The settle answer (session_wait.hpp): under virtual time the simulator moves the clock only
// when no session waits on something that ends by itself (the log, the store, a backoff).
TEST_CASE("session_machine: wait() names the call, the debounce alarm and the acks on the log or the store") {
  harness h;
  h.settings.queue.debounce_ms = 1000;
  h.settings.storage.durability = storage::durability::batch;
  session_machine::options opts;
  opts.alarms = true;
  opts.commit_log = true;
  h.start(opts);
  CHECK(h.m->wait().idle());
  h.chat("a", "one");
  session_wait w = h.m->wait();
  CHECK(w.on_runner);
  CHECK_FALSE(w.on_pool);
  CHECK(w.acks_on_log == 0);
  h.clk.advance(100);
  h.chat("b", "two");
  CHECK(h.m->wait().queued == 1);
  h.answer(0, "r1");
  // The turn's record waits for its sync; the follow-up waits for quiet, on the clock.
  w = h.m->wait();
  CHECK_FALSE(w.on_runner);
  CHECK(w.acks_on_log == 1);
  CHECK(w.wake_at_ms == kT0 + 1100);
  CHECK(w.queued == 1);
  CHECK_FALSE(w.idle());
  const commit_log_append rec = h.last.all<plan_log>()[0]->append;
  h.go(h.m->synced(h.m->core().transcript_file_id(), rec.seq, ""));
  w = h.m->wait();
  CHECK(w.acks_on_log == 0);
  CHECK(w.wake_at_ms == kT0 + 1100);  // only the clock is left
  h.clk.set(kT0 + 1100);
  h.go(h.m->wake());
  w = h.m->wait();
  CHECK(w.wake_at_ms == -1);
  CHECK(w.on_runner);
  CHECK(w.queued == 0);

  // storeDurableAck without the log: the ack waits on the store.
  harness s;
  s.settings.storage.store_durable_ack = true;
  s.start();
  s.chat("a", "one");
  s.answer(0, "r1");
  CHECK(s.m->wait().acks_on_store == 1);
  s.go(s.m->stored(""));
  CHECK(s.m->wait().idle());
}

TEST_CASE("session_machine: wait() names a row fetch, and a report sums the sessions' waits") {
  harness h;
  h.start();
  h.chat("a", "one");
  h.answer(0, "r1");
  h.go(h.m->trim());
  h.chat("b", "two");
  CHECK(h.m->wait().row_fetch);
  settle_report r;
  r.add(h.m->wait());
  session_wait d;
  d.wake_at_ms = 5;
  r.add(d);
  d.wake_at_ms = 3;
  r.add(d);
  r.add(session_wait{});
  CHECK(r.sessions == 4);
  CHECK(r.idle == 1);
  CHECK(r.row_fetch == 1);
  CHECK(r.debounce == 2);
  CHECK(r.next_wake_ms == 3);
  CHECK(r.in_transit() == 1);
}
