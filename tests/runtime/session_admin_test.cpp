// The session administration the gateway's sessions.* methods use (runtime::patch_session):
// a model set there is the user's choice, as /new <model> makes it.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

#include "tests/runtime/lifecycle_harness.hpp"

using namespace sessionrt;
using namespace sessionrt::testing;

TEST_CASE("patch_session: a model is a user override (provider/model or the configured provider), null clears it") {
  lifecycle_harness h;
  auto rt = h.start([](actors::runtime_settings& s) { s.model.provider = "anthropic"; });
  runtime::runtime::session_patch p;
  p.model = std::optional<std::string>("openai/gpt-4o");
  auto row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK(row->entry.provider_override() == std::optional<std::string_view>("openai"));
  CHECK(row->entry.model_override() == std::optional<std::string_view>("gpt-4o"));
  CHECK(row->entry.model_override_source() == std::optional<std::string_view>("user"));

  p.model = std::optional<std::string>("claude-x");
  row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK(row->entry.provider_override() == std::optional<std::string_view>("anthropic"));
  CHECK(row->entry.model_override() == std::optional<std::string_view>("claude-x"));

  p.model = std::optional<std::string>(std::nullopt);
  row = rt->patch_session("agent:main:main", p);
  REQUIRE(row.ok());
  CHECK_FALSE(row->entry.provider_override().has_value());
  CHECK_FALSE(row->entry.model_override().has_value());
  CHECK_FALSE(row->entry.model_override_source().has_value());
  REQUIRE(rt->stop().ok());
}

namespace {

// Holds the first turn call until open(); records each turn's model.
class gated_runner final : public model_runner {
 public:
  explicit gated_runner(sessionrt::clock& c) : inner_(c, {}) {}
  result<boost::json::object> run(const model_request& r) override {
    if (r.purpose == "turn") {
      std::unique_lock<std::mutex> lk(mu_);
      models_.push_back(r.model);
      cv_.notify_all();
      cv_.wait(lk, [&] { return open_ || models_.size() > 1; });
    }
    return inner_.run(r);
  }
  bool wait_calls(std::size_t n) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return models_.size() >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> models() {
    std::lock_guard<std::mutex> g(mu_);
    return models_;
  }

 private:
  runtime::simulated_model inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  std::vector<std::string> models_;
};

}  // namespace

// Before the router's hold, the patch passivated the key and then wrote the row, and a chat
// arriving in between started an actor from the old row, whose next write dropped the patch.
TEST_CASE("patch_session: a chat that arrives while the row is rewritten waits and runs on the patched row") {
  lifecycle_harness h;
  auto runner = std::make_shared<gated_runner>(h.clk);
  auto rt = h.start([](actors::runtime_settings& s) { s.model.provider = "anthropic"; }, runner);
  const std::string key = "agent:main:main";

  auto first = rt->send(dm("1", "first"));
  REQUIRE(runner->wait_calls(1));  // the first turn is in the model
  runtime::runtime::session_patch p;
  p.model = std::optional<std::string>("openai/gpt-4o");
  p.label = std::optional<std::string>("patched");
  auto patched = std::async(std::launch::async, [&] { return rt->patch_session(key, p); });
  // The hold reached the router (its signal, not a poll): the key's actor is on its way out,
  // after its turn.
  REQUIRE(rt->wait_until_held(key));
  REQUIRE(rt->stats().passivating == 1);
  auto second = rt->send(dm("1", "second"));
  rt->settle();  // answered through the relay and the router, behind the second chat
  REQUIRE(rt->stats().waiting == 1);  // it waits
  runner->open();

  CHECK(first.get().st.ok());
  auto row = patched.get();
  REQUIRE(row.ok());
  const auto out = second.get();
  REQUIRE(out.st.ok());
  CHECK_FALSE(out.new_session);
  const auto models = runner->models();
  REQUIRE(models.size() == 2);
  CHECK(models[1] == "gpt-4o");  // the second turn ran on the patched row
  auto after = rt->session(key);
  REQUIRE(after.ok());
  REQUIRE(after->has_value());
  CHECK((*after)->label() == std::optional<std::string_view>("patched"));  // its writes kept the patch
  CHECK((*after)->model_override() == std::optional<std::string_view>("gpt-4o"));
  REQUIRE(rt->stop().ok());
}
