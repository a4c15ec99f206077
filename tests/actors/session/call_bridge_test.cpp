// call_bridge without CAF and without threads: a runner the test answers by hand (inside its
// start() or later), a real model_gate, a pool whose jobs the test runs, a manual_clock's
// alarms, and a mailbox that records what reached it. What must hold: an answer given before
// start() returns is returned and never posted (its pieces go inline, ahead of it); a later
// answer, its pieces and notes, the gate's grant, the timeout and a summary reach the mailbox
// by call id; end() releases the gate's ticket and cancels the alarm; wait() says where the
// running call is.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/session/call_bridge.hpp"

using namespace sessionrt;
using namespace sessionrt::actors;

namespace {

constexpr std::int64_t kT0 = 1796011140000;

class recorded_mail final : public call_mailbox {
 public:
  mutable std::vector<std::string> got;
  void granted(std::uint64_t id) const override { got.push_back("granted " + std::to_string(id)); }
  void model_done(std::uint64_t id, model_answer a) const override {
    got.push_back("done " + std::to_string(id) + (a.ok() ? " ok" : " " + a.error().message()));
  }
  void text(std::uint64_t id, std::string piece) const override { got.push_back("text " + std::to_string(id) + " " + piece); }
  void note(std::uint64_t id, std::string kind, std::string json) const override {
    got.push_back("note " + std::to_string(id) + " " + kind + " " + json);
  }
  void summary_done(std::uint64_t id, result<std::string> a) const override {
    got.push_back("summary " + std::to_string(id) + " " + (a.ok() ? *a : a.error().message()));
  }
  void timed_out(std::uint64_t id) const override { got.push_back("timeout " + std::to_string(id)); }
};

// Keeps each call; `inside` runs inside start() (to answer or stream before it returns).
class test_runner final : public async_model_runner {
 public:
  struct call {
    std::shared_ptr<const model_request> request;
    std::shared_ptr<model_completion> done;
  };
  std::vector<call> calls;
  std::function<void(call&)> inside;
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    calls.push_back({std::move(request), std::move(done)});
    if (inside) inside(calls.back());
  }
};

class test_pool final : public blocking_work {
 public:
  std::vector<std::function<void()>> jobs;
  void post(std::function<void()> job) override { jobs.push_back(std::move(job)); }
};

class fixed_summary final : public compaction_provider {
 public:
  result<std::string> summarize(const summarize_request&, const cancellation&) override { return std::string("short"); }
};

boost::json::object answer() { return {{"role", "assistant"}}; }

struct harness {
  manual_clock clk{kT0};
  test_runner runner;
  test_pool pool;
  std::unique_ptr<model_gate> gate;
  std::shared_ptr<recorded_mail> mail = std::make_shared<recorded_mail>();
  std::vector<std::string> inline_pieces;
  std::unique_ptr<call_bridge> bridge;

  void start(std::int64_t timeout_ms = 0, std::size_t max_calls = 0) {
    if (max_calls > 0) gate = std::make_unique<model_gate>(max_calls, std::map<std::string, std::size_t>{});
    call_bridge_deps d;
    d.runner = &runner;
    d.gate = gate.get();
    d.pool = &pool;
    d.timers = &clk;
    d.time = &clk;
    d.timeout_ms = timeout_ms;
    bridge = std::make_unique<call_bridge>(d, mail);
    bridge->deliver_inline_to(
        {[this](std::uint64_t id, std::string_view p) { inline_pieces.push_back(std::to_string(id) + " " + std::string(p)); },
         [this](std::uint64_t id, boost::json::object m) {
           inline_pieces.push_back(std::to_string(id) + " " + boost::json::serialize(m));
         }});
  }
  // A request whose handlers the machine took (the bridge sets its own).
  std::optional<model_answer> call(std::uint64_t id, bool streams = true) {
    call_port::streams s;
    s.text = s.message = s.fallback = streams;
    return bridge->start_model(id, std::make_shared<model_request>(), s, std::make_shared<cancellation>());
  }
};

}  // namespace

TEST_CASE("call_bridge: an answer before start() returns is returned, its pieces inline ahead of it, nothing posted") {
  harness h;
  h.start(30000, 1);
  h.runner.inside = [](test_runner::call& c) {
    c.request->on_text("hel");
    c.request->on_message(boost::json::object{{"n", 1}});
    c.done->complete(answer());
  };
  auto a = h.call(7);
  REQUIRE(a.has_value());
  CHECK(a->ok());
  CHECK(h.inline_pieces == std::vector<std::string>{"7 hel", R"(7 {"n":1})"});
  CHECK(h.mail->got.empty());
  // The call is over: the gate's room is free, no alarm waits, nothing is held.
  CHECK(h.gate->stats().running == 0);
  CHECK(h.clk.pending_alarms() == 0);
  CHECK(h.bridge->wait() == call_bridge::waiting::nothing);
}

TEST_CASE("call_bridge: a later answer, its pieces and notes reach the mailbox by call id, end() releases the call") {
  harness h;
  h.start(30000, 1);
  CHECK_FALSE(h.call(3).has_value());
  CHECK(h.bridge->wait() == call_bridge::waiting::runner);
  CHECK(h.gate->stats().running == 1);
  CHECK(h.clk.pending_alarms() == 1);  // model.timeoutMs
  REQUIRE(h.runner.calls.size() == 1);
  auto& c = h.runner.calls[0];
  c.request->on_text("piece");
  c.request->on_message(boost::json::object{{"role", "toolResult"}});
  c.request->on_fallback("a/x", "b/y", "overloaded");
  c.done->complete(status(errc::io_error, "boom"));
  CHECK(h.mail->got == std::vector<std::string>{
                           "text 3 piece", R"(note 3 message {"role":"toolResult"})",
                           R"(note 3 fallback {"from":"a/x","to":"b/y","reason":"overloaded"})", "done 3 boom"});
  CHECK(h.inline_pieces.empty());
  h.bridge->end(2);  // not the running call: nothing happens
  CHECK(h.gate->stats().running == 1);
  h.bridge->end(3);
  CHECK(h.gate->stats().running == 0);
  CHECK(h.clk.pending_alarms() == 0);
  CHECK(h.bridge->wait() == call_bridge::waiting::nothing);
}

TEST_CASE("call_bridge: a full gate holds the call until granted, then launch() hands it to the runner") {
  harness h;
  h.start(0, 1);
  model_gate& gate = *h.gate;
  const auto held = gate.acquire("", [] {});  // another session holds the only room
  CHECK_FALSE(h.call(5, false).has_value());
  CHECK(h.bridge->wait() == call_bridge::waiting::gate);
  CHECK(h.runner.calls.empty());
  CHECK_FALSE(h.bridge->launch(4).has_value());  // not this call
  CHECK(h.runner.calls.empty());
  gate.release(held);  // the grant comes on the releasing thread: posted
  CHECK(h.mail->got == std::vector<std::string>{"granted 5"});
  CHECK_FALSE(h.bridge->launch(5).has_value());
  REQUIRE(h.runner.calls.size() == 1);
  CHECK(h.bridge->wait() == call_bridge::waiting::runner);
  CHECK_FALSE(h.bridge->launch(5).has_value());  // handed over once
  CHECK(h.runner.calls.size() == 1);
  h.bridge->end(5);
  CHECK(gate.stats().running == 0);
}

TEST_CASE("call_bridge: the timeout alarm posts timed_out at model.timeoutMs, a summary runs on the pool") {
  harness h;
  h.start(1000);
  CHECK_FALSE(h.call(1, false).has_value());
  h.clk.advance(999);
  CHECK(h.mail->got.empty());
  h.clk.advance(1);
  CHECK(h.mail->got == std::vector<std::string>{"timeout 1"});
  h.bridge->timeout_fired(1);
  h.bridge->end(1);
  h.mail->got.clear();

  h.bridge->start_summary(2, std::make_shared<fixed_summary>(), std::make_shared<summarize_request>(),
                          std::make_shared<cancellation>());
  CHECK(h.bridge->wait() == call_bridge::waiting::pool);
  REQUIRE(h.pool.jobs.size() == 1);
  CHECK(h.mail->got.empty());
  h.pool.jobs[0]();
  CHECK(h.mail->got == std::vector<std::string>{"summary 2 short"});
  h.bridge->end(2);
  CHECK(h.clk.pending_alarms() == 0);
}

TEST_CASE("call_bridge: gone, it releases its call, and what the runner says later only reaches the mailbox") {
  harness h;
  h.start(1000, 1);
  CHECK_FALSE(h.call(9).has_value());
  auto c = h.runner.calls.at(0);
  h.bridge.reset();
  CHECK(h.gate->stats().running == 0);
  CHECK(h.clk.pending_alarms() == 0);
  c.request->on_text("late");
  c.done->complete(answer());
  CHECK(h.mail->got == std::vector<std::string>{"text 9 late", "done 9 ok"});
}
