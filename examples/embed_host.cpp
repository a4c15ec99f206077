// embed_host: a small host that embeds sessionrt.
// It starts a runtime on a fresh state dir with the built-in simulated model, subscribes to
// every lifecycle event (and counts the pieces of each streamed reply), and has "alice" talk on Telegram and then Discord (one person, one
// session: dmScope per-peer with an identity link), a team chat in a Telegram group, a /new,
// a /status, and two runs of a cron job (each in a new session). It prints the replies, the
// events as they happen, and the sessions at the end.
//   embed_host [--state DIR] [--config FILE] [--quiet-events]     (--help, --version)
// --config loads the runtime's settings from a config file (runtime/config.hpp) instead of the
// demo's (dmScope per-peer, alice linked across Telegram and Discord); --state wins over its
// stateDir.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"
#include "runtime/cli/version.hpp"
#include "runtime/config.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;

namespace {

std::mutex out_mu;
std::atomic<int> streamed_pieces{0};  // reply.delta events with text during the current exchange

void say(const std::string& line) {
  std::lock_guard<std::mutex> g(out_mu);
  std::cout << line << "\n";
}

chat_event message(const std::string& channel, const std::string& kind, const std::string& peer,
                   const std::string& text, const std::string& sender = "") {
  chat_event ev;
  ev.channel = channel;
  ev.peer_kind = kind;
  ev.peer_id = peer;
  ev.sender_id = sender;
  ev.text = text;
  return ev;
}

void exchange(runtime::runtime& rt, const chat_event& ev) {
  const std::string who = ev.sender_id.empty() ? ev.peer_id : ev.sender_id;
  say("\n" + ev.channel + " " + who + " > " + ev.text);
  streamed_pieces = 0;
  turn_outcome out = rt.send(ev).get();  // ready once the turn is durable (storage.durability)
  rt.settle();                           // let the events of this turn print first
  if (!out.st.ok())
    say("  ! " + out.st.to_string());
  else if (!out.command.empty()) {
    std::string text = "  [" + out.command + "]";
    std::size_t start = 0;
    while (start < out.command_output.size()) {
      std::size_t nl = out.command_output.find('\n', start);
      if (nl == std::string::npos) nl = out.command_output.size();
      text += "\n    " + out.command_output.substr(start, nl - start);
      start = nl + 1;
    }
    say(text);
  }
  else if (out.reply)
    say("  < " + *out.reply + "  (streamed in " + std::to_string(streamed_pieces.load()) + " reply.delta pieces)");
  else if (out.suppressed)
    say("  (reply suppressed)");
}

void cron_run(runtime::runtime& rt, const std::string& prompt) {
  say("\ncron digest > " + prompt);
  system_event ev;
  ev.kind = system_event_kind::cron;
  ev.job_id = "digest";
  ev.job_name = "Daily digest";
  ev.text = prompt;
  rt.send(ev);
  rt.settle();  // the run's reply arrives as a cron.completed event
}

const char* const usage =
    "usage: embed_host [--state DIR] [--config FILE] [--quiet-events]\n"
    "  Runs a short demo conversation through an embedded sessionrt runtime with the simulated model.\n"
    "  --state DIR      state directory (default: a fresh /tmp/sessionrt-demo-XXXXXX)\n"
    "  --config FILE    runtime settings from a config file (default: the demo's routing)\n"
    "  --quiet-events   do not print lifecycle events\n"
    "  --version        print the version and exit\n";

}  // namespace

int main(int argc, char** argv) {
  std::string state, config;
  bool events = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--state") && i + 1 < argc) state = argv[++i];
    else if (!std::strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    else if (!std::strcmp(argv[i], "--quiet-events")) events = false;
    else if (!std::strcmp(argv[i], "--version")) {
      std::cout << "embed_host (sessionrt " << runtime::version_string() << ")\n";
      return 0;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << usage;
      return 0;
    } else {
      std::cerr << "embed_host: unknown argument " << argv[i] << "\n" << usage;
      return 2;
    }
  }
  runtime::runtime_options opt;
  if (!config.empty()) {
    auto loaded = runtime::load_config_file(storage::posix_fs(), config, runtime::process_environment());
    if (!loaded.ok()) {
      std::cerr << "embed_host: " << loaded.error().to_string() << "\n";
      return 2;
    }
    for (const auto& w : loaded->warnings) std::cerr << "embed_host: warning: " << w << "\n";
    opt.settings = std::move(loaded->settings);
    if (state.empty()) state = opt.settings.state_dir;
  } else {
    opt.settings.routing.session.direct_message_scope = actors::dm_scope::per_peer;
    opt.settings.routing.session.links = {{"alice", {"telegram:111", "discord:222"}}};
  }
  if (state.empty()) {
    char tmpl[] = "/tmp/sessionrt-demo-XXXXXX";
    if (!mkdtemp(tmpl)) return 2;
    state = tmpl;
  }

  opt.settings.state_dir = state;
  opt.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto started = runtime::runtime::start(opt);
  if (!started.ok()) {
    std::cerr << "embed_host: " << started.error().to_string() << "\n";
    return 1;
  }
  auto& rt = **started;
  say("sessionrt embedded; state dir " + state);
  rt.subscribe({}, [events](const lifecycle_event& e) {
    if (e.type == "cron.completed") {  // a cron run's reply comes as an event
      auto field = [&](const char* k) { return std::string(json::get_string(e.data, k).value_or("")); };
      say(field("error").empty() ? "  < " + field("reply") + " (new session " + field("sessionId") + ")"
                                 : "  ! " + field("error"));
    }
    if (!events) return;
    std::string data = json::to_compact(e.data);
    if (data.size() > 110) data = data.substr(0, 107) + "...";
    say("  event " + e.type + " " + e.session_key + (e.data.empty() ? "" : " " + data));
  });

  // A streaming host shows the reply as it comes; here we only count the pieces.
  rt.subscribe({{"reply.delta"}, "", ""}, [](const lifecycle_event& e) {
    if (!json::get_string(e.data, "text").value_or("").empty()) ++streamed_pieces;
  });

  exchange(rt, message("telegram", "direct", "111", "Hi, I'm Alice. Plan the release for Friday."));
  exchange(rt, message("telegram", "direct", "111", "Add a rollback step."));
  exchange(rt, message("discord", "direct", "222", "Same person on Discord: what did we plan?"));
  exchange(rt, message("telegram", "group", "-100123", "Team: the release is Friday at 17:00.", "333"));
  exchange(rt, message("telegram", "direct", "111", "/new"));
  exchange(rt, message("telegram", "direct", "111", "Fresh start: a new topic."));
  exchange(rt, message("telegram", "direct", "111", "/status"));
  cron_run(rt, "Summarize yesterday's release notes.");
  cron_run(rt, "Summarize today's release notes.");

  say("\nsessions in " + state + ":");
  auto rows = rt.sessions();
  if (!rows.ok()) say("listing the sessions failed: " + rows.error().to_string());
  else
  for (const auto& row : *rows)
    say("  " + row.key + "  " + std::string(row.entry.session_id().value_or("")) + "  " +
        std::to_string(row.entry.total_tokens().value_or(0)) + " prompt tokens");
  status stopped = rt.stop();
  say(stopped.ok() ? "stopped cleanly (transcripts synced, locks released, store written)" : stopped.to_string());
  say("look at the files: build/sessionrt store check " + state + "/agents/main/sessions/sessions.json");
  return stopped.ok() ? 0 : 1;
}
