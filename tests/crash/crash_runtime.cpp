// Child process of the runtime crash test: a runtime (durability=batch, session.trimIdleMs 1 ms
// so the idle sweep trims idle sessions, a /new every 7th turn) serves 8 conversations, one
// turn in flight each, and prints every acknowledged turn until killed:
//   ok <text>        a chat turn acknowledged (its user message is durable in a transcript)
//   new <key>        a /new acknowledged
//   trimmed <n>      conversation 0, parked, was trimmed (n sessions trimmed then); it goes on
//   crash_runtime STATE_DIR
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;

namespace {

constexpr int kConversations = 8;
std::mutex out_mu;

void say(const std::string& line) {
  std::lock_guard<std::mutex> g(out_mu);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

chat_event turn_event(int peer, const std::string& text) {
  chat_event ev;
  ev.channel = "telegram";
  ev.peer_kind = "direct";
  ev.peer_id = "p" + std::to_string(peer);
  ev.text = text;
  return ev;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crash_runtime STATE_DIR\n");
    return 2;
  }
  runtime::runtime_options o;
  o.settings.state_dir = argv[1];
  o.settings.session.reset.timezone = "UTC";
  actors::reset_config off;  // no 04:00 rollover in the middle of the test
  off.mode = actors::reset_mode::none;
  o.settings.session.reset.reset = off;
  o.settings.session.trim_idle_ms = 1;
  o.settings.session.write_lock.acquire_timeout_ms = 5000;  // a killed predecessor's lock is stale at once
  o.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
  o.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto started = runtime::runtime::start(o);
  if (!started.ok()) {
    std::fprintf(stderr, "crash_runtime: %s\n", started.error().to_string().c_str());
    return 1;
  }
  runtime::runtime& rt = **started;
  // The run this process is: turn texts must be unique across the parent's rounds.
  const std::string run = std::to_string(::getpid());
  // Conversation 0 parks before its turn 22 (a chat turn, not a /new) until the sweep has trimmed it (the main thread
  // sees it in the router's stats), then goes on: its next turn fetches its row and reopens
  // its transcript while the others keep running.
  constexpr int kParkAfter = 22;
  std::atomic<bool> parked{false};
  std::function<void(int, int)> next = [&](int peer, int n) {
    if (peer == 0 && n == kParkAfter && !parked.exchange(true)) return;
    const bool reset = n % 7 == 6;
    const std::string text = reset ? "/new" : "crash run " + run + " peer " + std::to_string(peer) + " turn " + std::to_string(n);
    rt.send(turn_event(peer, text), [&, peer, n, reset, text](turn_outcome out) {
      if (!out.st.ok()) {
        say("fail " + out.st.to_string());
        return;
      }
      say(reset ? "new " + out.session_key : "ok " + text);
      next(peer, n + 1);
    });
  };
  for (int p = 0; p < kConversations; ++p) next(p, 0);
  // Polls the router's stats (the sweep runs once a second) until the parked conversation is
  // trimmed, reports it and lets the conversation go on.
  for (bool told = false;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (told || !parked.load()) continue;
    const auto stats = rt.stats();
    if (stats.trimmed != 0) {
      say("trimmed " + std::to_string(stats.trimmed));
      told = true;
      next(0, kParkAfter);
    }
  }
}
