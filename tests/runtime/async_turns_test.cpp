// Asynchronous turns (issue 12): a slow model never stalls the runtime. The simulated model
// answers after a latency in virtual time (its alarms are the manual clock's), so a test
// holds calls in flight for as long as it likes and lets them finish with advance(); no
// sleeps. What each test asserts could fail: calls really in flight at once, commands
// answered while the model runs, queue modes, cancellation seen by the runner, the bound on
// concurrent calls, timeouts, stop().
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/transcript_file.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
using runtime::simulated_latency;
using runtime::simulated_model;

namespace {

constexpr std::int64_t kT0 = 1796011140000;
constexpr std::int64_t kLatency = 1000;

struct harness {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  std::shared_ptr<simulated_model> model;
  std::vector<lifecycle_event> events;
  std::mutex mu;
  std::unique_ptr<runtime::runtime> rt;

  explicit harness(std::function<void(actors::runtime_settings&)> tweak = {}, std::int64_t latency = kLatency) {
    runtime::simulated_model_options mo;
    mo.latency.ms = latency;
    mo.timers = &clk;
    model = std::make_shared<simulated_model>(clk, mo);
    runtime::runtime_options o;
    o.settings.state_dir = dir.path();
    o.settings.session.reset.timezone = "UTC";
    o.runner = model;
    o.time = &clk;
    o.virtual_time = true;
    o.threads = 2;
    if (tweak) tweak(o.settings);
    o.subscriptions.push_back({{}, [this](const lifecycle_event& e) {
                                 std::lock_guard<std::mutex> g(mu);
                                 events.push_back(e);
                               }});
    auto started = runtime::runtime::start(o);
    REQUIRE(started.ok());
    rt = std::move(*started);
  }
  ~harness() {
    if (rt) (void)rt->stop();
  }
  std::size_t count(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    return std::count_if(events.begin(), events.end(), [&](const lifecycle_event& e) { return e.type == type; });
  }
  std::vector<lifecycle_event> of_type(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<lifecycle_event> out;
    for (const auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
  // Lets the model's calls finish, a latency at a time, until `f` is ready.
  turn_outcome finish(std::future<turn_outcome>& f, int rounds = 50) {
    for (int i = 0; i < rounds && f.wait_for(std::chrono::seconds(0)) != std::future_status::ready; ++i) {
      rt->settle();
      if (f.wait_for(std::chrono::seconds(0)) == std::future_status::ready) break;
      REQUIRE(rt->advance(kLatency).ok());
    }
    REQUIRE(f.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    return f.get();
  }
  // role: text of every message in the key's transcript, in file order.
  std::vector<std::string> transcript(const std::string& key) {
    auto row = rt->session(key);
    REQUIRE(row.ok());
    REQUIRE(row->has_value());
    const std::string file = dir.path() + "/agents/main/sessions/" + std::string((*row)->session_id().value_or("")) + ".jsonl";
    std::vector<std::string> out;
    std::istringstream in(testing::read_text(file));
    for (std::string line; std::getline(in, line);) {
      auto v = boost::json::parse(line);
      const auto& o = v.as_object();
      if (json::get_string(o, "type") != std::optional<std::string_view>("message")) continue;
      const auto& m = o.at("message").as_object();
      out.push_back(std::string(json::get_string(m, "role").value_or("")) + ": " +
                    message_text(m.if_contains("content")).substr(0, 40));
    }
    return out;
  }
};

chat_event dm(const std::string& peer, const std::string& text) {
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_id = peer;
  ev.text = text;
  return ev;
}

bool ready(std::future<turn_outcome>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

const std::string kMain = "agent:main:main";

}  // namespace

void per_peer(actors::runtime_settings& s) { s.routing.session.direct_message_scope = actors::dm_scope::per_peer; }

TEST_CASE("async turns: 50 sessions have their model calls in flight at once, they finish after one latency") {
  harness h([](auto& s) {
    per_peer(s);
    s.model.max_concurrent = 0;
  });
  std::vector<std::future<turn_outcome>> outs;
  for (int i = 0; i < 50; ++i) outs.push_back(h.rt->send(dm(std::to_string(i), "hello " + std::to_string(i))));
  h.rt->settle();
  CHECK(h.model->counters().in_flight == 50);
  for (auto& f : outs) CHECK_FALSE(ready(f));
  REQUIRE(h.rt->advance(kLatency).ok());
  for (auto& f : outs) {
    auto out = h.finish(f);
    CHECK(out.st.ok());
    CHECK(out.reply.has_value());
  }
  CHECK(h.model->counters().peak_in_flight == 50);
}

TEST_CASE("async turns: /status and /context list are answered while the session's model call runs") {
  harness h;
  auto first = h.rt->send(dm("1", "a question that takes the model a while"));
  h.rt->settle();
  REQUIRE_FALSE(ready(first));
  auto status = h.rt->send(dm("1", "/status"));
  REQUIRE(status.wait_for(std::chrono::seconds(5)) == std::future_status::ready);  // no advance needed
  auto s = status.get();
  CHECK(s.command == "/status");
  CHECK(s.command_output.find("A turn is running.") != std::string::npos);
  CHECK(s.command_output.find("🪢 Queue: followup") != std::string::npos);
  auto ctx = h.rt->send(dm("1", "/context list"));
  REQUIRE(ctx.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(ctx.get().command_output.find("a question that takes") != std::string::npos);
  CHECK_FALSE(ready(first));
  CHECK(h.finish(first).reply.has_value());
}

TEST_CASE("async turns: followup runs what arrived during a turn afterwards, in order") {
  harness h;
  auto a = h.rt->send(dm("1", "first"));
  auto b = h.rt->send(dm("1", "second"));
  auto c = h.rt->send(dm("1", "third"));
  h.rt->settle();
  CHECK(h.model->counters().in_flight == 1);
  CHECK(h.count(event_types::turn_queued) == 2);
  CHECK(h.finish(a).st.ok());
  CHECK(h.finish(b).st.ok());
  CHECK(h.finish(c).st.ok());
  auto t = h.transcript(kMain);
  REQUIRE(t.size() == 6);
  CHECK(t[0] == "user: first");
  CHECK(t[2] == "user: second");
  CHECK(t[4] == "user: third");
  CHECK(t[5].rfind("assistant: ", 0) == 0);
}

TEST_CASE("async turns: collect makes the messages that arrived during a run one follow-up turn") {
  harness h([](auto& s) { s.queue.mode = actors::queue_mode::collect; });
  auto a = h.rt->send(dm("1", "first"));
  h.rt->settle();
  auto b = h.rt->send(dm("1", "second"));
  auto c = h.rt->send(dm("1", "third"));
  CHECK(h.finish(a).st.ok());
  auto ob = h.finish(b);
  auto oc = h.finish(c);
  CHECK(ob.st.ok());
  CHECK(ob.reply == oc.reply);  // one turn answered both
  auto t = h.transcript(kMain);
  REQUIRE(t.size() == 4);
  CHECK(t[2] == "user: second\n\nthird");
  CHECK(h.model->counters().turn_calls == 2);
}

TEST_CASE("async turns: interrupt cancels the running call, stores nothing of it and runs the new message") {
  harness h([](auto& s) { s.queue.mode = actors::queue_mode::interrupt; });
  auto a = h.rt->send(dm("1", "first"));
  h.rt->settle();
  auto b = h.rt->send(dm("1", "never mind, this instead"));
  auto oa = h.finish(a);
  CHECK(oa.st.code() == errc::cancelled);
  CHECK_FALSE(oa.reply.has_value());
  CHECK(h.model->counters().cancelled_calls == 1);  // the runner saw the cancellation
  CHECK(h.finish(b).reply.has_value());
  auto t = h.transcript(kMain);
  REQUIRE(t.size() == 3);  // user, user, assistant: nothing of the cancelled reply
  CHECK(t[0] == "user: first");
  CHECK(t[1] == "user: never mind, this instead");
  CHECK(t[2].rfind("assistant: ", 0) == 0);
  auto cancelled = h.of_type(event_types::turn_cancelled);
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0].data.at("reason") == "interrupt");
  // The transcript still loads and builds a context.
  auto row = *h.rt->session(kMain);
  auto opened = storage::transcript_file::open(storage::posix_fs(), h.clk,
                                               h.dir.path() + "/agents/main/sessions/" +
                                                   std::string(row->session_id().value_or("")) + ".jsonl",
                                               {});
  REQUIRE(opened.ok());
  CHECK((*opened)->context().ok());
}

TEST_CASE("async turns: /stop cancels the running call and drops what waits, /new during a run cancels it first") {
  harness h;
  auto a = h.rt->send(dm("1", "first"));
  h.rt->settle();
  auto b = h.rt->send(dm("1", "waiting"));
  auto stop = h.rt->send(dm("1", "/stop"));
  REQUIRE(stop.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  auto os = stop.get();
  CHECK(os.command == "/stop");
  CHECK(os.command_output == "Stopped the running turn; 1 waiting message(s) dropped.");
  CHECK(h.finish(a).st.code() == errc::cancelled);
  CHECK(h.finish(b).st.code() == errc::cancelled);
  CHECK(h.model->counters().cancelled_calls == 1);

  const auto row_before = h.rt->session(kMain).value();  // the row, not a view into a temporary
  REQUIRE(row_before.has_value());
  const std::string before(row_before->session_id().value_or(""));
  auto c = h.rt->send(dm("1", "another long one"));
  h.rt->settle();
  auto reset = h.rt->send(dm("1", "/new"));
  CHECK(h.finish(c).st.code() == errc::cancelled);
  auto oreset = h.finish(reset);
  CHECK(oreset.new_session);
  CHECK(oreset.session_id != before);
  CHECK(h.model->counters().cancelled_calls == 2);
}

TEST_CASE("async turns: messages.queue.cap and drop bound what waits") {
  SECTION("drop old: the oldest waiting message goes") {
    harness h([](auto& s) {
      s.queue.cap = 2;
      s.queue.drop = actors::queue_drop::old_first;
    });
    auto a = h.rt->send(dm("1", "running"));
    h.rt->settle();
    auto w1 = h.rt->send(dm("1", "w1"));
    auto w2 = h.rt->send(dm("1", "w2"));
    auto w3 = h.rt->send(dm("1", "w3"));
    REQUIRE(w1.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    auto dropped = w1.get();
    CHECK(dropped.st.code() == errc::limit_exceeded);
    CHECK(dropped.st.message().find("messages.queue.cap 2") != std::string::npos);
    CHECK(h.finish(a).st.ok());
    CHECK(h.finish(w2).st.ok());
    CHECK(h.finish(w3).st.ok());
  }
  SECTION("drop new: the arriving message is refused") {
    harness h([](auto& s) {
      s.queue.cap = 1;
      s.queue.drop = actors::queue_drop::new_first;
    });
    auto a = h.rt->send(dm("1", "running"));
    h.rt->settle();
    auto w1 = h.rt->send(dm("1", "w1"));
    auto w2 = h.rt->send(dm("1", "w2"));
    REQUIRE(w2.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CHECK(w2.get().st.code() == errc::limit_exceeded);
    CHECK(h.finish(a).st.ok());
    CHECK(h.finish(w1).st.ok());
  }
  SECTION("summarize: the dropped message reaches the next turn as a note") {
    harness h([](auto& s) {
      s.queue.cap = 1;
      s.queue.drop = actors::queue_drop::summarize;
    });
    auto a = h.rt->send(dm("1", "running"));
    h.rt->settle();
    auto w1 = h.rt->send(dm("1", "the dropped one"));
    auto w2 = h.rt->send(dm("1", "the kept one"));
    REQUIRE(w1.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CHECK(w1.get().st.code() == errc::limit_exceeded);
    CHECK(h.finish(a).st.ok());
    CHECK(h.finish(w2).st.ok());
    auto t = h.transcript(kMain);
    // Runtime context reaches the model only: the stored turn is what the user sent.
    CHECK(t[2] == "user: the kept one");
  }
}

TEST_CASE("async turns: model.maxConcurrent bounds the calls in flight, the rest wait first come, first served") {
  harness h([](auto& s) {
    per_peer(s);
    s.model.max_concurrent = 4;
  });
  std::vector<std::future<turn_outcome>> outs;
  for (int i = 0; i < 20; ++i) outs.push_back(h.rt->send(dm(std::to_string(i), "hi")));
  h.rt->settle();
  CHECK(h.model->counters().in_flight == 4);
  CHECK(h.rt->model_calls().waiting == 16);
  CHECK(h.rt->stats().model_running == 4);
  CHECK(h.rt->stats().model_waiting == 16);
  for (auto& f : outs) CHECK(h.finish(f).st.ok());
  CHECK(h.model->counters().peak_in_flight == 4);
  CHECK(h.rt->model_calls().admitted_late == 16);
  CHECK(h.rt->model_calls().running == 0);
}

TEST_CASE("async turns: a call past model.timeoutMs is cancelled, the turn fails naming the limit, the next works") {
  harness h([](auto& s) { s.model.timeout_ms = 5000; }, 60000);
  auto a = h.rt->send(dm("1", "slow"));
  h.rt->settle();
  REQUIRE(h.rt->advance(5000).ok());
  auto oa = h.finish(a);
  CHECK(oa.st.code() == errc::timeout);
  CHECK(oa.st.message().find("model.timeoutMs (5000 ms)") != std::string::npos);
  CHECK(h.model->counters().cancelled_calls == 1);
  simulated_latency quick;
  quick.ms = 10;
  h.model->set_latency(quick);
  auto b = h.rt->send(dm("1", "quick"));
  auto ob = h.finish(b);
  CHECK(ob.st.ok());
  auto t = h.transcript(kMain);
  REQUIRE(t.size() == 3);  // the user's message of the failed turn stays
  CHECK(t[0] == "user: slow");
  CHECK(t[1] == "user: quick");
}

TEST_CASE("async turns: stop() with calls in flight answers every send and the runner sees the cancellations") {
  harness h(per_peer);
  std::vector<std::future<turn_outcome>> outs;
  for (int i = 0; i < 10; ++i) outs.push_back(h.rt->send(dm(std::to_string(i), "hi")));
  outs.push_back(h.rt->send(dm("0", "queued behind")));
  h.rt->settle();
  REQUIRE(h.rt->stop(std::chrono::seconds(10)).ok());
  for (auto& f : outs) {
    REQUIRE(ready(f));
    CHECK(f.get().st.code() == errc::cancelled);
  }
  CHECK(h.model->counters().cancelled_calls == 10);
  h.rt.reset();
}

namespace {

// Completes each call twice (the second is ignored) or never (the timeout ends it).
class misbehaving_runner final : public async_model_runner {
 public:
  explicit misbehaving_runner(sessionrt::clock& c) : model(c) {}
  bool twice = true;
  simulated_model model;
  std::vector<std::shared_ptr<model_completion>> kept;
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    if (!twice) {
      kept.push_back(done);  // never completes
      return;
    }
    auto first = model.run(*request);
    done->complete(first);
    done->complete(result<boost::json::object>(errc::io_error, "the second completion"));
    kept.push_back(done);
  }
};

}  // namespace

TEST_CASE("async turns: a runner that completes twice is heard once, one that never completes is ended by the timeout") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  auto runner = std::make_shared<misbehaving_runner>(clk);
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.model.timeout_ms = 2000;
  o.async_runner = runner;
  o.time = &clk;
  o.virtual_time = true;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  auto first = (*rt)->send(dm("1", "hello")).get();
  CHECK(first.st.ok());
  REQUIRE(runner->kept.size() == 1);
  CHECK(runner->kept[0]->duplicates() == 1);
  runner->twice = false;
  auto never = (*rt)->send(dm("1", "again"));
  (*rt)->settle();
  CHECK_FALSE(ready(never));
  REQUIRE((*rt)->advance(2000).ok());
  REQUIRE(never.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(never.get().st.code() == errc::timeout);
  CHECK((*rt)->stop().ok());
}

TEST_CASE("async turns: memory flush and compaction summaries go through a slow runner") {
  harness h([](auto& s) {
    s.model.context_window = 4000;
    s.compaction.reserve_tokens_floor = 1000;
    s.compaction.reserve_tokens = 1000;
    s.compaction.keep_recent_tokens = 500;
    s.memory_flush.soft_threshold_tokens = 500;
    // The harness starts a minute before 04:00: a daily reset after the first turns would
    // leave the last ones too few tokens to compact (how many rounds a turn takes varies).
    actors::reset_config none;
    none.mode = actors::reset_mode::none;
    s.session.reset.reset = none;
  });
  const std::string filler(1200, 'x');
  for (int i = 0; i < 8; ++i) {
    auto f = h.rt->send(dm("1", "message " + std::to_string(i) + " " + filler));
    CHECK(h.finish(f).st.ok());
  }
  h.rt->settle();
  CHECK(h.count(event_types::compaction_completed) >= 1);
  CHECK(h.count(event_types::memory_flush_completed) >= 1);
  CHECK(h.model->counters().compaction_summary_calls >= 1);
  CHECK(h.model->counters().memory_flush_calls >= 1);
}

namespace {

// A synchronous runner that holds each call until the test releases it.
class gated_sync_runner final : public model_runner {
 public:
  explicit gated_sync_runner(sessionrt::clock& c) : model(c) {}
  result<boost::json::object> run(const model_request& request) override {
    std::unique_lock<std::mutex> lk(mu);
    ++running;
    cv.notify_all();
    cv.wait(lk, [&] { return open; });
    --running;
    return model.run(request);
  }
  void wait_running(int n) {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return running >= n; });
  }
  void release() {
    std::lock_guard<std::mutex> g(mu);
    open = true;
    cv.notify_all();
  }
  simulated_model model;
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  bool open = false;
};

}  // namespace

TEST_CASE("async turns: a synchronous runner runs on model.syncRunnerThreads threads, never on the scheduler") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  auto runner = std::make_shared<gated_sync_runner>(clk);
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  o.settings.model.sync_runner_threads = 3;
  o.runner = runner;
  o.time = &clk;
  o.virtual_time = true;
  o.threads = 2;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  std::vector<std::future<turn_outcome>> outs;
  for (int i = 0; i < 6; ++i) outs.push_back((*rt)->send(dm(std::to_string(i), "hi")));
  runner->wait_running(3);  // three calls block their pool threads: more than the scheduler has
  auto status = (*rt)->send(dm("0", "/status"));
  REQUIRE(status.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(status.get().command == "/status");
  {
    std::lock_guard<std::mutex> g(runner->mu);
    CHECK(runner->running == 3);  // the pool's bound
  }
  runner->release();
  for (auto& f : outs) {
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(f.get().st.ok());
  }
  CHECK((*rt)->stop().ok());
}

namespace {

// A runner that supports steering: it holds each call until the test lets it reach a tool
// boundary, where it takes what the user sent meanwhile, then answers.
class steerable_runner final : public async_model_runner {
 public:
  explicit steerable_runner(sessionrt::clock& c) : model(c) {}
  bool supports_steering() const override { return true; }
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    std::lock_guard<std::mutex> g(mu);
    held.emplace_back(std::move(request), std::move(done));
  }
  // The tool boundary of the oldest held call: takes the steered texts, then completes.
  std::vector<std::string> boundary_and_answer() {
    std::shared_ptr<const model_request> req;
    std::shared_ptr<model_completion> done;
    {
      std::lock_guard<std::mutex> g(mu);
      REQUIRE_FALSE(held.empty());
      std::tie(req, done) = held.front();
      held.erase(held.begin());
    }
    std::vector<std::string> taken;
    if (req->steering) taken = req->steering->take();
    done->complete(model.run(*req));
    return taken;
  }
  simulated_model model;
  std::mutex mu;
  std::vector<std::pair<std::shared_ptr<const model_request>, std::shared_ptr<model_completion>>> held;
};

}  // namespace

TEST_CASE("async turns: steer hands a message to the running call at its tool boundary, stored before the reply") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  auto runner = std::make_shared<steerable_runner>(clk);
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.queue.mode = actors::queue_mode::steer;
  o.async_runner = runner;
  o.time = &clk;
  o.virtual_time = true;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  auto a = (*rt)->send(dm("1", "write the report"));
  (*rt)->settle();
  auto b = (*rt)->send(dm("1", "and add a summary"));
  (*rt)->settle();
  CHECK_FALSE(ready(b));
  auto taken = runner->boundary_and_answer();
  REQUIRE(taken == std::vector<std::string>{"and add a summary"});
  REQUIRE(a.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  REQUIRE(b.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  auto oa = a.get();
  auto ob = b.get();
  CHECK(oa.st.ok());
  CHECK(ob.reply == oa.reply);  // the steered message is answered by the turn it joined
  {
    std::lock_guard<std::mutex> g(runner->mu);
    CHECK(runner->held.empty());  // no follow-up turn: the message was taken
  }
  // The next message is not taken by anyone: the call ends without a tool boundary, and it
  // waits as a follow-up.
  auto c = (*rt)->send(dm("1", "first"));
  (*rt)->settle();
  auto d = (*rt)->send(dm("1", "second, not taken"));
  (*rt)->settle();
  {
    std::lock_guard<std::mutex> g(runner->mu);
    REQUIRE(runner->held.size() == 1);
    auto [req, done] = runner->held.front();
    runner->held.clear();
    done->complete(runner->model.run(*req));  // completes without taking the steered text
  }
  REQUIRE(c.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  (*rt)->settle();
  CHECK_FALSE(ready(d));
  (void)runner->boundary_and_answer();  // the follow-up turn of "second, not taken"
  REQUIRE(d.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
  CHECK(d.get().st.ok());
  auto row = (*rt)->session(kMain).value();
  REQUIRE(row.has_value());
  const std::string file = dir.path() + "/agents/main/sessions/" + std::string(row->session_id().value_or("")) + ".jsonl";
  std::vector<std::string> roles;
  std::istringstream in(testing::read_text(file));
  for (std::string line; std::getline(in, line);) {
    auto v = boost::json::parse(line).as_object();
    if (json::get_string(v, "type") == std::optional<std::string_view>("message"))
      roles.push_back(std::string(json::get_string(v.at("message").as_object(), "role").value_or("")) + ":" +
                      message_text(v.at("message").as_object().if_contains("content")).substr(0, 12));
  }
  CHECK(roles == std::vector<std::string>{"user:write the re", "user:and add a su", "assistant:" + roles[2].substr(10),
                                          "user:first", "assistant:" + roles[4].substr(10), "user:second, not ",
                                          "assistant:" + roles[6].substr(10)});
  CHECK((*rt)->stop().ok());
}

TEST_CASE("async turns: /queue sets the session's queue mode in its row, and a bad option changes nothing") {
  harness h;
  auto set = h.rt->send(dm("1", "/queue collect cap:5 drop:old debounce:2s"));
  auto out = h.finish(set);
  CHECK(out.command == "/queue");
  CHECK(out.command_output == "Queue: collect (cap 5, drop old, debounce 2000 ms)");
  auto row = h.rt->session(kMain).value();
  REQUIRE(row.has_value());
  CHECK(row->queue_mode() == std::optional<std::string_view>("collect"));
  CHECK(row->queue_cap() == 5);
  auto bad = h.rt->send(dm("1", "/queue sometimes"));
  auto ob = h.finish(bad);
  CHECK(ob.st.code() == errc::invalid_argument);
  CHECK(ob.st.message().find("\"sometimes\" is not understood") != std::string::npos);
  const auto after = h.rt->session(kMain).value();
  REQUIRE(after.has_value());
  CHECK(after->queue_mode() == std::optional<std::string_view>("collect"));
  auto st = h.rt->send(dm("1", "/status"));
  CHECK(h.finish(st).command_output.find("🪢 Queue: collect") != std::string::npos);
  CHECK(h.model->counters().turn_calls == 0);  // none of these reached the model
}
