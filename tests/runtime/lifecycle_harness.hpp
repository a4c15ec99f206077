// A runtime on a temp state dir under virtual time for the session-lifecycle tests (forks,
// sub-agents, /new <model>, docking, system events): the simulated model behind a recorder
// of what each turn asked for (provider, model, the last user text), and every event kept.
#pragma once
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages/json_access.hpp"
#include "messages/transcript_entry.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing {

struct recorded_call {
  std::string provider, model, last_user_text;
  std::size_t messages = 0;
};

class recording_runner : public model_runner {
 public:
  explicit recording_runner(sessionrt::clock& c, runtime::simulated_model_options o = {}) : inner_(c, o) {}
  result<boost::json::object> run(const model_request& r) override {
    if (r.purpose == "turn") {
      recorded_call c{r.provider, r.model, std::string(), r.messages.size()};
      for (auto it = r.messages.rbegin(); it != r.messages.rend(); ++it)
        if (it->is_object() && json::get_string(it->as_object(), "role") == std::optional<std::string_view>("user")) {
          c.last_user_text = message_text(it->as_object().if_contains("content"));
          break;
        }
      std::lock_guard<std::mutex> g(mu_);
      calls_.push_back(std::move(c));
    }
    return inner_.run(r);
  }
  std::vector<recorded_call> calls() {
    std::lock_guard<std::mutex> g(mu_);
    return calls_;
  }

 private:
  runtime::simulated_model inner_;
  std::mutex mu_;
  std::vector<recorded_call> calls_;
};

struct lifecycle_harness {
  static constexpr std::int64_t kT0 = 1796011140000;  // 2026-11-30T03:59:00Z
  temp_dir dir;
  manual_clock clk{kT0};
  std::shared_ptr<recording_runner> model;
  std::mutex mu;
  std::vector<lifecycle_event> events;

  explicit lifecycle_harness(runtime::simulated_model_options o = {}) : model(std::make_shared<recording_runner>(clk, o)) {}

  // The options start() uses (the state dir, UTC, virtual time on the clock, 2 threads, every
  // event kept), for a test that adds its own before starting. `runner`: instead of the
  // recording one (a test whose runner must stay asynchronous, as the simulated model is).
  runtime::runtime_options options(const std::function<void(actors::runtime_settings&)>& tweak = {},
                                   std::shared_ptr<model_runner> runner = nullptr) {
    runtime::runtime_options o;
    o.settings.state_dir = dir.path();
    o.settings.session.reset.timezone = "UTC";
    o.runner = runner ? std::move(runner) : model;
    o.time = &clk;
    o.virtual_time = true;
    o.threads = 2;
    o.subscriptions.push_back({{}, [this](const lifecycle_event& e) {
                                 std::lock_guard<std::mutex> g(mu);
                                 events.push_back(e);
                               }});
    if (tweak) tweak(o.settings);
    return o;
  }
  std::unique_ptr<runtime::runtime> start(const std::function<void(actors::runtime_settings&)>& tweak = {},
                                          std::shared_ptr<model_runner> runner = nullptr) {
    return start_with(options(tweak, std::move(runner)));
  }
  static std::unique_ptr<runtime::runtime> start_with(runtime::runtime_options o) {
    auto rt = runtime::runtime::start(std::move(o));
    if (!rt.ok()) throw std::runtime_error(rt.error().message());
    return std::move(*rt);
  }
  std::vector<lifecycle_event> of_type(std::string_view type) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<lifecycle_event> out;
    for (const auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
  std::string sessions_dir() const { return dir.path() + "/agents/main/sessions"; }
};

inline chat_event inbound(const std::string& channel, const std::string& peer, const std::string& text) {
  chat_event ev;
  ev.channel = channel;
  ev.peer_id = peer;
  ev.text = text;
  return ev;
}

}  // namespace sessionrt::testing
