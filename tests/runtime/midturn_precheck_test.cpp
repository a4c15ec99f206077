// compaction.midTurnPrecheck through the runtime: a runner in a tool loop asks mid-turn, is
// told to stop, and the runtime compacts and retries the turn.
#include <catch2/catch.hpp>

#include <mutex>

#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;

namespace {

constexpr std::int64_t kT0 = 1796011140000;

// The simulated model, except that a turn whose text contains "[tool loop]" first runs a
// tool that returns a huge result and asks the precheck before its next call.
class tool_loop_runner final : public async_model_runner {
 public:
  explicit tool_loop_runner(sessionrt::clock& c) : model(c) {}
  void start(std::shared_ptr<const model_request> request, std::shared_ptr<model_completion> done,
             std::shared_ptr<const cancellation>) override {
    const auto& last = request->messages.back().as_object();
    const std::string text = message_text(last.if_contains("content"));
    if (request->purpose == "turn" && text.find("[tool loop]") != std::string::npos) {
      std::lock_guard<std::mutex> g(mu);
      seen_precheck = request->precheck != nullptr;
      if (request->precheck && loops++ == 0) {
        // 40 tool results of 2,000 chars: cutting each to what is left would leave too little
        // of each, so the answer is to compact.
        boost::json::array added;
        for (int k = 0; k < 40; ++k)
          added.emplace_back(boost::json::object{
              {"role", "toolResult"}, {"toolCallId", "c" + std::to_string(k)}, {"toolName", "read"}, {"isError", false},
              {"timestamp", 1},
              {"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", std::string(2000, 'r')}}}}});
        answers.push_back(request->precheck->check(added));
        if (answers.back().what == precheck_answer::verdict::compact) {
          done->complete(result<boost::json::object>(errc::limit_exceeded, "context overflow: mid-turn precheck"));
          return;
        }
      }
    }
    done->complete(model.run(*request));
  }
  runtime::simulated_model model;
  std::mutex mu;
  bool seen_precheck = false;
  int loops = 0;
  std::vector<precheck_answer> answers;
};

}  // namespace

TEST_CASE("midturn precheck: a runner told to stop mid-turn gets its turn compacted and retried") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  auto runner = std::make_shared<tool_loop_runner>(clk);
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.settings.model.context_window = 12000;
  o.settings.compaction.reserve_tokens = 2000;
  o.settings.compaction.reserve_tokens_floor = 2000;
  o.settings.compaction.keep_recent_tokens = 1000;
  o.settings.memory_flush.enabled = false;
  o.settings.compaction.mid_turn_precheck = true;
  o.async_runner = runner;
  o.time = &clk;
  o.virtual_time = true;
  std::vector<lifecycle_event> compactions;
  std::mutex mu;
  o.subscriptions.push_back({{{"compaction.completed"}, "", ""}, [&](const lifecycle_event& e) {
                               std::lock_guard<std::mutex> g(mu);
                               compactions.push_back(e);
                             }});
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_id = "1";
  for (int i = 0; i < 6; ++i) {
    ev.text = "earlier message " + std::to_string(i) + " " + std::string(3000, 'e');
    REQUIRE((*rt)->send(ev).get().st.ok());
  }
  ev.text = "[tool loop] read the big file";
  auto out = (*rt)->send(ev).get();
  CHECK(out.st.ok());
  CHECK(out.reply.has_value());
  (*rt)->settle();
  {
    std::lock_guard<std::mutex> g(runner->mu);
    CHECK(runner->seen_precheck);
    REQUIRE(runner->answers.size() == 1);
    CHECK(runner->answers[0].what == precheck_answer::verdict::compact);
    CHECK(runner->answers[0].context_tokens > runner->answers[0].threshold);
  }
  std::lock_guard<std::mutex> g(mu);
  REQUIRE_FALSE(compactions.empty());
  CHECK(compactions.back().data.at("reason") == "overflow");
  CHECK((*rt)->stop().ok());
}

TEST_CASE("midturn precheck: off by default, a runner gets no precheck") {
  testing::temp_dir dir;
  manual_clock clk{kT0};
  auto runner = std::make_shared<tool_loop_runner>(clk);
  runtime::runtime_options o;
  o.settings.state_dir = dir.path();
  o.settings.session.reset.timezone = "UTC";
  o.async_runner = runner;
  o.time = &clk;
  o.virtual_time = true;
  auto rt = runtime::runtime::start(o);
  REQUIRE(rt.ok());
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_id = "1";
  ev.text = "[tool loop] hello";
  CHECK((*rt)->send(ev).get().st.ok());
  std::lock_guard<std::mutex> g(runner->mu);
  CHECK_FALSE(runner->seen_precheck);
  CHECK((*rt)->stop().ok());
}
