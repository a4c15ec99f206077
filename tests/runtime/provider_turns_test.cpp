// Whole agent turns through the built-in provider runners (runtime/providers) against the fake
// provider servers of tests/providers/fake_provider.mjs, over real HTTP on loopback: the fake
// checks every request against its API's rules and answers 400 when one is broken, so a turn
// that succeeds here sent requests the real API accepts. Real time (HTTP is real); every wait is
// a future with a generous limit, never a sleep.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <future>
#include <mutex>

#include "messages/json_access.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "storage/system_clock.hpp"
#include "tests/runtime/fake_provider_process.hpp"
#include "tests/test_support.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

const char* const kApis[] = {"openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai"};

actors::provider_model model_named(std::string id) {
  actors::provider_model m;
  m.id = std::move(id);
  m.context_window = 200000;
  m.max_tokens = 1024;
  m.cost = {3.0, 15.0, 0.3, 3.75};
  return m;
}

actors::provider_config provider_for(const testing::fake_provider_process& fake, const std::string& id,
                                     const std::string& api, std::vector<std::string> models) {
  actors::provider_config p;
  p.id = id;
  p.api = api;
  p.base_url = fake.base_url(api);
  p.api_key = "test-key";
  p.api_key_source = "literal";
  p.timeout_seconds = 20;
  for (auto& m : models) p.models.push_back(model_named(m));
  return p;
}

// A tool that answers at once, from another thread, with a text naming its arguments.
std::shared_ptr<providers::tool_registry> lookup_tools(std::atomic<int>* calls) {
  auto reg = std::make_shared<providers::tool_registry>();
  providers::tool t;
  t.spec.name = "lookup";
  t.spec.description = "Looks a word up.";
  t.spec.parameters = bj::parse(R"({"type":"object","properties":{"word":{"type":"string"}},"required":["word"]})").as_object();
  t.execute = [calls](bj::object args, std::shared_ptr<const cancellation>, std::function<void(providers::tool_result)> done) {
    ++*calls;
    std::thread([args = std::move(args), done = std::move(done)] {
      done(providers::tool_result::text("definition of " + std::string(json::get_string(args, "word").value_or("?"))));
    }).detach();
  };
  REQUIRE(reg->add(std::move(t)).ok());
  return reg;
}

struct provider_harness {
  testing::temp_dir dir;
  std::shared_ptr<providers::provider_runner> runner;
  std::unique_ptr<runtime::runtime> rt;
  std::mutex mu;
  std::vector<lifecycle_event> events;

  provider_harness(actors::runtime_settings s, std::shared_ptr<const providers::tool_registry> tools = nullptr,
                   const std::string& state_dir = "") {
    s.state_dir = state_dir.empty() ? dir.path() : state_dir;
    s.session.reset.timezone = "UTC";
    auto setup = runtime::runner_for_config(s, std::move(tools));
    REQUIRE(setup.ok());
    REQUIRE(setup->runner);
    runner = setup->runner;
    runtime::runtime_options o;
    o.settings = s;
    o.async_runner = runner;
    o.threads = 2;
    o.subscriptions.push_back({{{"model.", "turn.", "message.", "overflow.", "compaction.", "reply."}, "", ""},
                               [this](const lifecycle_event& e) {
                                 std::lock_guard g(mu);
                                 events.push_back(e);
                               }});
    auto started = runtime::runtime::start(o);
    REQUIRE(started.ok());
    rt = std::move(*started);
  }
  ~provider_harness() {
    if (rt) (void)rt->stop();
  }
  turn_outcome send(const std::string& text) {
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_id = "42";
    ev.text = text;
    auto f = rt->send(ev);
    REQUIRE(f.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    auto out = f.get();
    // The events published before the ack reach the subscriber through the asynchronous bus:
    // a turn whose lines were durable already (the user's line went to the commit log while
    // the model ran) is acknowledged at once, ahead of that delivery.
    rt->settle();
    return out;
  }
  bj::array history(const std::string& key) {
    auto h = rt->history(key);
    REQUIRE(h.ok());
    return h->messages;
  }
  std::vector<lifecycle_event> of(std::string_view type) {
    std::lock_guard g(mu);
    std::vector<lifecycle_event> out;
    for (auto& e : events)
      if (e.type == type) out.push_back(e);
    return out;
  }
};

std::string role_of(const bj::value& m) { return std::string(json::get_string(m.as_object(), "role").value_or("")); }

std::int64_t stat(const bj::value& stats, const char* name) {
  const auto* o = stats.if_object();
  if (!o || !o->contains(name) || !o->at(name).is_number()) return -1;
  return o->at(name).to_number<std::int64_t>();
}

actors::runtime_settings settings_for(const testing::fake_provider_process& fake, const std::string& api,
                                      std::vector<std::string> models, const std::string& primary) {
  actors::runtime_settings s;
  s.models.providers.push_back(provider_for(fake, "fake", api, std::move(models)));
  s.models.defaults.primary = "fake/" + primary;
  return s;
}

}  // namespace

TEST_CASE("provider turns: a streamed reply from each API is stored with its model, usage and cost", "[providers]") {
  testing::fake_provider_process fake;
  for (const char* api : kApis) {
    INFO(api);
    provider_harness h(settings_for(fake, api, {"echo"}, "echo"));
    std::string streamed;
    std::mutex smu;
    h.rt->subscribe({{"reply.delta"}, "", ""}, [&](const lifecycle_event& e) {
      std::lock_guard g(smu);
      streamed += json::get_string(e.data, "text").value_or("");
    });
    const turn_outcome out = h.send("hello there");
    REQUIRE(out.st.ok());
    REQUIRE(out.reply);
    CHECK(out.reply->find("Echo: hello there") == 0);
    CHECK(out.reply->find("héllo 👋") != std::string::npos);  // split mid-character on the wire, whole here
    const auto msgs = h.history(out.session_key);
    REQUIRE(msgs.size() == 2);
    const auto& reply = msgs[1].as_object();
    CHECK(json::get_string(reply, "api") == api);
    CHECK(json::get_string(reply, "provider") == "fake");
    CHECK(json::get_string(reply, "model") == "echo");
    CHECK(json::get_string(reply, "stopReason") == "stop");
    const auto* usage = json::get_object(reply, "usage");
    REQUIRE(usage);
    CHECK(json::get_int(*usage, "input").value_or(0) > 0);
    CHECK(json::get_int(*usage, "output").value_or(0) > 0);
    const auto* cost = json::get_object(*usage, "cost");
    REQUIRE(cost);
    CHECK(cost->at("total").to_number<double>() > 0);
    {
      std::lock_guard g(smu);
      CHECK(streamed == *out.reply);  // the deltas joined are the stored reply
    }
    // The session's window is the configured model's, and /status says which model.
    CHECK(h.send("/status").command_output.find("fake/echo") != std::string::npos);
  }
  CHECK(stat(fake.get("/__stats"), "unauthorized") == 0);
}

TEST_CASE("provider turns: a tool loop of 3 rounds stores every message in order, and a restart goes on", "[providers]") {
  testing::fake_provider_process fake;
  for (const char* api : kApis) {
    INFO(api);
    testing::temp_dir state;
    std::atomic<int> calls{0};
    auto tools = lookup_tools(&calls);
    std::string key;
    {
      provider_harness h(settings_for(fake, api, {"tools-3"}, "tools-3"), tools, state.path());
      const turn_outcome out = h.send("look three words up");
      REQUIRE(out.st.ok());
      REQUIRE(out.reply);
      CHECK(out.reply->find("Tool results:") != std::string::npos);
      key = out.session_key;
      const auto msgs = h.history(key);
      // user, assistant(2 calls), 2 results, assistant(1 call), result, assistant(1 call), result, final
      std::vector<std::string> roles;
      for (const auto& m : msgs) roles.push_back(role_of(m));
      CHECK(roles == std::vector<std::string>{"user", "assistant", "toolResult", "toolResult", "assistant", "toolResult",
                                              "assistant", "toolResult", "assistant"});
      CHECK(calls.load() == 4);
      // Each result answers the call before it, by id.
      for (std::size_t i = 0; i < msgs.size(); ++i) {
        if (role_of(msgs[i]) != "toolResult") continue;
        const std::string id(json::get_string(msgs[i].as_object(), "toolCallId").value_or(""));
        bool found = false;
        for (std::size_t j = i; j-- > 0 && !found;)
          if (role_of(msgs[j]) == "assistant")
            for (const auto& b : msgs[j].as_object().at("content").as_array())
              found = found || json::get_string(b.as_object(), "id") == id;
        CHECK(found);
      }
      CHECK(h.of("message.appended").size() == 9);
    }
    // A restart reads the tool turns back and sends them again: the API accepts the history.
    provider_harness again(settings_for(fake, api, {"tools-3"}, "echo"), tools, state.path());
    const turn_outcome next = again.send("and now?");
    REQUIRE(next.st.ok());
    CHECK(again.history(key).size() == 11);
  }
  CHECK(stat(fake.get("/__stats"), "requests") > 0);
  const auto rejected = fake.get("/__stats").as_object().at("rejected");
  CHECK(rejected.as_object().empty());  // no request broke an API rule
}

TEST_CASE("provider turns: 429 with retry-after is honoured, a 500 is retried, 529 too", "[providers]") {
  testing::fake_provider_process fake;
  auto s = settings_for(fake, "anthropic-messages", {"rate-limit-once", "error-500-once", "overloaded-once"},
                        "rate-limit-once");
  provider_harness h(s);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = h.send("hello");
  const auto waited = std::chrono::steady_clock::now() - t0;
  REQUIRE(out.st.ok());
  CHECK(waited >= std::chrono::milliseconds(950));  // retry-after: 1 (the fake's default)
  CHECK(h.runner->stats().retries == 1);
  REQUIRE(h.rt->patch_session(out.session_key, {.model = std::string("fake/error-500-once")}).ok());
  out = h.send("again");
  REQUIRE(out.st.ok());
  CHECK(h.runner->stats().retries == 2);
  REQUIRE(h.rt->patch_session(out.session_key, {.model = std::string("fake/overloaded-once")}).ok());
  out = h.send("once more");
  REQUIRE(out.st.ok());
  CHECK(h.runner->stats().retries == 3);
}

TEST_CASE("provider turns: a refused connection and a bad key go to the fallback, said by model.fallback", "[providers]") {
  testing::fake_provider_process fake;
  actors::runtime_settings s;
  auto dead = provider_for(fake, "dead", "openai-completions", {"echo"});
  dead.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  auto badkey = provider_for(fake, "badkey", "openai-completions", {"echo"});
  badkey.api_key = "wrong";
  s.models.providers = {dead, badkey, provider_for(fake, "good", "anthropic-messages", {"echo"})};
  s.models.defaults = {"dead/echo", {"badkey/echo", "good/echo"}};
  s.models.retry_max_attempts = 2;
  provider_harness h(s);
  const auto out = h.send("hello");
  REQUIRE(out.st.ok());
  const auto msgs = h.history(out.session_key);
  CHECK(json::get_string(msgs.back().as_object(), "provider") == "good");  // the stored reply says who answered
  const auto fallbacks = h.of("model.fallback");
  REQUIRE(fallbacks.size() == 2);
  CHECK(json::get_string(fallbacks[0].data, "from") == "dead/echo");
  CHECK(json::get_string(fallbacks[0].data, "to") == "badkey/echo");
  CHECK(json::get_string(fallbacks[1].data, "reason").value_or("").find("401") != std::string::npos);
  CHECK(std::string(json::get_string(fallbacks[1].data, "reason").value_or("")).find("wrong") == std::string::npos);
}

TEST_CASE("provider turns: a failure mid-stream fails the turn with the provider's text, and the next message works",
          "[providers]") {
  testing::fake_provider_process fake;
  for (const char* model : {"reset-mid-stream", "truncated", "overloaded-stream"}) {
    INFO(model);
    provider_harness h(settings_for(fake, "openai-completions", {model, "echo"}, model));
    auto out = h.send("first");
    CHECK_FALSE(out.st.ok());
    CHECK(h.of("turn.failed").size() == 1);
    auto msgs = h.history(out.session_key);
    REQUIRE(msgs.size() == 1);  // the user's message stays
    CHECK(role_of(msgs[0]) == "user");
    // The user's two messages go to a model that answers (the failing one fails every time).
    REQUIRE(h.rt->patch_session(out.session_key, {.model = std::string("fake/echo")}).ok());
    out = h.send("second");
    INFO(out.st.message());
    REQUIRE(out.st.ok());
    CHECK(h.history(out.session_key).size() == 3);
    CHECK(h.runner->stats().retries == 0);  // never retried mid-stream
  }
}

TEST_CASE("provider turns: a silent server past the idle timeout fails the turn naming it", "[providers]") {
  testing::fake_provider_process fake;
  auto s = settings_for(fake, "anthropic-messages", {"silent"}, "silent");
  s.models.providers[0].timeout_seconds = 1;
  s.models.retry_max_attempts = 1;
  provider_harness h(s);
  const auto out = h.send("anyone?");
  REQUIRE_FALSE(out.st.ok());
  CHECK(out.st.message().find("idle") != std::string::npos);
}

TEST_CASE("provider turns: /stop mid-stream closes the connection the server streams on", "[providers]") {
  testing::fake_provider_process fake;
  provider_harness h(settings_for(fake, "openai-completions", {"slow:300:20"}, "slow:300:20"));
  std::promise<void> first_delta;
  std::once_flag once;
  h.rt->subscribe({{"reply.delta"}, "", ""}, [&](const lifecycle_event&) { std::call_once(once, [&] { first_delta.set_value(); }); });
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_id = "42";
  ev.text = "tell me a long story";
  auto running = h.rt->send(ev);
  REQUIRE(first_delta.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  ev.text = "/stop";
  auto stopped = h.rt->send(ev);
  REQUIRE(running.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(running.get().st.code() == errc::cancelled);
  REQUIRE(stopped.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  // The server saw the client close before its stream ended (polled: it learns it asynchronously).
  std::int64_t closed = 0;
  for (int i = 0; i < 100 && closed < 1; ++i) {
    closed = stat(fake.get("/__stats"), "clientClosedBeforeEnd");
    if (closed < 1) std::this_thread::yield();
  }
  CHECK(closed >= 1);
}

TEST_CASE("provider turns: an overflow 400 compacts the session and a shorter request succeeds", "[providers]") {
  testing::fake_provider_process fake;
  auto s = settings_for(fake, "anthropic-messages", {"overflow:4", "echo"}, "overflow:4");
  s.compaction.keep_recent_tokens = 1;  // compaction keeps only the newest turn
  s.compaction_model = "fake/echo";     // the summary is written by another model
  provider_harness h(s);
  REQUIRE(h.send("one").st.ok());       // 1 message: short enough
  REQUIRE(h.send("two").st.ok());       // 3 messages
  const auto out = h.send("three");     // 5 messages: "prompt is too long"
  REQUIRE(out.st.ok());
  CHECK(h.of("compaction.completed").size() >= 1);
  CHECK(h.of("overflow.recovered").size() == 1);
  // The summary request went to compaction.model; the turns to the session's model.
  int summaries = 0, turns = 0;
  const bj::value requests = fake.get("/__requests");
  for (const auto& r : requests.as_array()) {
    const auto model = json::get_string(r.as_object(), "model").value_or("");
    summaries += model == "echo";
    turns += model == "overflow:4";
  }
  CHECK(summaries >= 1);
  CHECK(turns == 4);  // one, two, three (overflow), three again
}

TEST_CASE("provider turns: /new <alias> switches model, window and API, and the system prompt goes with it",
          "[providers]") {
  testing::fake_provider_process fake;
  actors::runtime_settings s;
  s.models.providers.push_back(provider_for(fake, "oc", "openai-completions", {"echo"}));
  auto small = provider_for(fake, "an", "anthropic-messages", {"echo"});
  small.models[0].context_window = 16000;
  small.models[0].aliases = {"small"};
  s.models.providers.push_back(small);
  s.models.defaults.primary = "oc/echo";
  s.prompts.defaults = "You are terse.";
  provider_harness h(s);
  REQUIRE(h.send("hi").st.ok());
  CHECK(h.send("/status").command_output.find("/200k") != std::string::npos);
  const std::string listed = h.send("/context list").command_output;
  CHECK(listed.find("system prompt") != std::string::npos);
  CHECK(listed.find("You are terse.") != std::string::npos);
  const auto out = h.send("/new small hello again");
  REQUIRE(out.st.ok());
  REQUIRE(out.reply);
  CHECK(out.reply->find("Echo: hello again") == 0);
  const std::string status = h.send("/status").command_output;
  CHECK(status.find("an/echo") != std::string::npos);
  CHECK(status.find("/16.0k") != std::string::npos);
  // The system prompt reached both APIs in their own places.
  const bj::value requests = fake.get("/__requests");
  const auto& all = requests.as_array();
  REQUIRE(all.size() == 2);
  const auto& first = all[0].as_object().at("body").as_object();
  CHECK(json::get_string(first.at("messages").as_array()[0].as_object(), "content") == "You are terse.");
  const auto& second = all[1].as_object().at("body").as_object();
  CHECK(boost::json::serialize(second.at("system")).find("You are terse.") != std::string::npos);
  CHECK(json::get_string(all[1].as_object(), "path") == "/v1/messages");
}
