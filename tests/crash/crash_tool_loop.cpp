// Child process of the tool-loop crash test (crash_tool_loop_test.cpp): a runtime whose model is
// the built-in provider_runner against tests/providers/fake_provider.mjs (model tools-3: a tool
// loop of 3 rounds per turn, then the final text), with one registered tool, `lookup`. It runs
// until the parent kills it with SIGKILL, printing on stdout:
//   tool <n>            the tool's n-th call (process-wide) started
//   blocked <n>         (block mode) the n-th call never answers: the child is mid-loop for good
//   ok <peer> <text>    a turn acknowledged
//   fail <status>       a turn failed (the parent fails the test)
// Lines starting with "[" are the runtime's log.
//   crash_tool_loop STATE_DIR PORT API block N   one turn (peer p0); the tool's N-th call blocks
//   crash_tool_loop STATE_DIR PORT API run C     C conversations (p0..p<C-1>), turn after turn;
//                                                every tool call answers at once (another thread)
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "messages/json_access.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

std::mutex out_mu;

void say(const std::string& line) {
  std::lock_guard<std::mutex> g(out_mu);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

std::string base_url(const std::string& api, const std::string& port) {
  const std::string origin = "http://127.0.0.1:" + port;
  if (api == "anthropic-messages") return origin;
  if (api == "google-generative-ai") return origin + "/v1beta";
  return origin + "/v1";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: crash_tool_loop STATE_DIR PORT API block N | run C\n");
    return 2;
  }
  const std::string state_dir = argv[1], port = argv[2], api = argv[3], mode = argv[4];
  const int n = std::atoi(argv[5]);
  if ((mode != "block" && mode != "run") || n < 1) {
    std::fprintf(stderr, "crash_tool_loop: mode block N or run C (N, C >= 1)\n");
    return 2;
  }

  actors::runtime_settings s;
  s.state_dir = state_dir;
  s.session.reset.timezone = "UTC";
  actors::reset_config off;  // no 04:00 rollover in the middle of the test
  off.mode = actors::reset_mode::none;
  s.session.reset.reset = off;
  s.session.write_lock.acquire_timeout_ms = 5000;  // a killed predecessor's lock is stale at once
  s.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  actors::provider_config p;
  p.id = "fake";
  p.api = api;
  p.base_url = base_url(api, port);
  p.api_key = "test-key";
  p.api_key_source = "literal";
  p.timeout_seconds = 20;
  for (const char* id : {"tools-3", "echo"}) {
    actors::provider_model m;
    m.id = id;
    m.context_window = 200000;
    m.max_tokens = 1024;
    p.models.push_back(m);
  }
  s.models.providers.push_back(p);
  s.models.defaults.primary = "fake/tools-3";

  // The tool: answers from another thread, except (block mode) its n-th call, which never does.
  std::atomic<int> calls{0};
  auto tools = std::make_shared<providers::tool_registry>();
  providers::tool t;
  t.spec.name = "lookup";
  t.spec.description = "Looks a word up.";
  t.spec.parameters =
      bj::parse(R"({"type":"object","properties":{"word":{"type":"string"}},"required":["word"]})").as_object();
  const bool block = mode == "block";
  t.execute = [&calls, block, n](bj::object args, std::shared_ptr<const cancellation>,
                                 std::function<void(providers::tool_result)> done) {
    const int call = ++calls;
    say("tool " + std::to_string(call));
    if (block && call == n) {
      say("blocked " + std::to_string(call));
      return;  // never answers: the loop waits here until the parent's SIGKILL
    }
    std::thread([call, args = std::move(args), done = std::move(done)] {
      done(providers::tool_result::text("definition " + std::to_string(call) + " of " +
                                        std::string(json::get_string(args, "word").value_or("?"))));
    }).detach();
  };
  if (auto added = tools->add(std::move(t)); !added.ok()) {
    std::fprintf(stderr, "crash_tool_loop: %s\n", added.to_string().c_str());
    return 1;
  }
  auto setup = runtime::runner_for_config(s, tools);
  if (!setup.ok() || !setup->runner) {
    std::fprintf(stderr, "crash_tool_loop: no runner: %s\n", setup.ok() ? "none" : setup.error().to_string().c_str());
    return 1;
  }
  runtime::runtime_options o;
  o.settings = s;
  o.async_runner = setup->runner;
  o.threads = 2;
  auto started = runtime::runtime::start(o);
  if (!started.ok()) {
    std::fprintf(stderr, "crash_tool_loop: %s\n", started.error().to_string().c_str());
    return 1;
  }
  runtime::runtime& rt = **started;
  const std::string run = std::to_string(::getpid());  // turn texts unique across the parent's rounds
  std::function<void(int, int)> next = [&](int peer, int turn) {
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_kind = "direct";
    ev.peer_id = "p" + std::to_string(peer);
    ev.text = "look words up, run " + run + " turn " + std::to_string(turn);
    rt.send(ev, [&, peer, turn, text = ev.text](turn_outcome out) {
      if (!out.st.ok()) {
        say("fail " + out.st.to_string());
        return;
      }
      say("ok p" + std::to_string(peer) + " " + text);
      next(peer, turn + 1);
    });
  };
  if (block)
    next(0, 0);
  else
    for (int peer = 0; peer < n; ++peer) next(peer, 0);
  // Until SIGKILL (turns run on the runtime's threads).
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lk(mu);
  cv.wait(lk, [] { return false; });
}
