// Child process of the row crash test: a runtime (durability batch, storage.storeFlushWindowMs
// from the command line: a few ms, so kills land in sessions.json writes, or 10 minutes, so the
// rows live only in the commit log) serves 6 group chats, one turn in flight each, each turn
// renaming its group (the row's `subject`: "r<round>n<k>"), and prints until killed:
//   started                 the runtime is up (the previous run's log replayed)
//   ok <key> <round> <k>    a turn acknowledged: its row change is durable
//   crash_rows STATE_DIR ROUND WINDOW_MS
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>

#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;

namespace {

constexpr int kGroups = 6;
std::mutex out_mu;

void say(const std::string& line) {
  std::lock_guard<std::mutex> g(out_mu);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: crash_rows STATE_DIR ROUND WINDOW_MS\n");
    return 2;
  }
  const std::string round = argv[2];
  runtime::runtime_options o;
  o.settings.state_dir = argv[1];
  o.settings.session.reset.timezone = "UTC";
  actors::reset_config off;  // no 04:00 rollover in the middle of the test
  off.mode = actors::reset_mode::none;
  o.settings.session.reset.reset = off;
  o.settings.session.write_lock.acquire_timeout_ms = 5000;  // a killed predecessor's lock is stale at once
  o.settings.storage.store_flush_window_ms = std::atoll(argv[3]);
  o.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto started = runtime::runtime::start(o);
  if (!started.ok()) {
    std::fprintf(stderr, "crash_rows: %s\n", started.error().to_string().c_str());
    return 1;
  }
  runtime::runtime& rt = **started;
  say("started");
  std::function<void(int, int)> next = [&](int group, int k) {
    chat_event ev;
    ev.channel = "telegram";
    ev.peer_kind = "group";
    ev.peer_id = "-100" + std::to_string(group);
    ev.sender_id = "77";
    ev.subject = "r" + round + "n" + std::to_string(k);
    ev.text = "turn " + std::to_string(k);
    rt.send(ev, [&, group, k](turn_outcome out) {
      if (!out.st.ok()) {
        say("fail " + out.st.to_string());
        return;
      }
      say("ok " + out.session_key + " " + round + " " + std::to_string(k));
      next(group, k + 1);
    });
  };
  for (int g = 0; g < kGroups; ++g) next(g, 0);
  for (;;) ::pause();  // until killed
}
