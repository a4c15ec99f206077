// provider_host: a host that talks to a real model with a tool. It loads a config file that
// names a model (models.providers + agents.defaults.model, as in the README's quick start),
// registers two tools ("clock": the time now; "word_count": counts the words of a text), starts
// the runtime with the built-in provider runner, sends each message given on the command line
// to one session and prints the reply, the tool rounds stored in between, and any fallback.
//   provider_host --config FILE [--state DIR] MESSAGE...     (--help, --version)
// Without a configured model it says so and exits 2 (the runtime itself would fall back to
// nothing: a host picks the simulated model explicitly, see embed_host).
#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "messages/json_access.hpp"
#include "runtime/cli/version.hpp"
#include "runtime/config.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "storage/fs.hpp"

using namespace sessionrt;
namespace bj = boost::json;

namespace {

std::shared_ptr<providers::tool_registry> host_tools() {
  auto tools = std::make_shared<providers::tool_registry>();
  providers::tool clock;
  clock.spec = {"clock", "The current date and time (UTC), ISO 8601.",
                bj::object{{"type", "object"}, {"properties", bj::object{}}}};
  clock.execute = [](bj::object, std::shared_ptr<const cancellation>, std::function<void(providers::tool_result)> done) {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    done(providers::tool_result::text(buf));
  };
  (void)tools->add(std::move(clock));
  providers::tool words;
  words.spec = {"word_count", "Counts the words of a text.",
                bj::object{{"type", "object"},
                           {"properties", bj::object{{"text", bj::object{{"type", "string"}}}}},
                           {"required", bj::array{"text"}}}};
  words.execute = [](bj::object args, std::shared_ptr<const cancellation>, std::function<void(providers::tool_result)> done) {
    auto text = json::get_string(args, "text");
    if (!text) return done(providers::tool_result::text("word_count needs a \"text\" string", true));
    std::istringstream in{std::string(*text)};
    std::size_t n = 0;
    for (std::string w; in >> w;) ++n;
    done(providers::tool_result::text(std::to_string(n)));
  };
  (void)tools->add(std::move(words));
  return tools;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config, state;
  std::vector<std::string> messages;
  const char* const usage = "usage: provider_host --config FILE [--state DIR] MESSAGE...   (--help, --version)\n";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--config" && i + 1 < argc) config = argv[++i];
    else if (a == "--state" && i + 1 < argc) state = argv[++i];
    else if (a == "--version") {
      std::cout << "provider_host (sessionrt " << runtime::version_string() << ")\n";
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    } else messages.push_back(a);
  }
  if (config.empty() || messages.empty()) {
    std::cerr << usage;
    return 2;
  }
  auto loaded = runtime::load_config_file(storage::posix_fs(), config, runtime::process_environment());
  if (!loaded.ok()) {
    std::cerr << "provider_host: " << loaded.error().message() << "\n";
    return 2;
  }
  for (const auto& w : loaded->warnings) std::cerr << "warning: " << w << "\n";
  runtime::runtime_options opt;
  opt.settings = loaded->settings;
  if (!state.empty()) opt.settings.state_dir = state;
  auto setup = runtime::runner_for_config(opt.settings, host_tools());
  if (!setup.ok()) {
    std::cerr << "provider_host: " << setup.error().message() << "\n";
    return 2;
  }
  for (const auto& line : setup->said) std::cout << line << "\n";
  if (!setup->runner) return 2;
  opt.async_runner = setup->runner;
  std::mutex mu;
  opt.subscriptions.push_back({{{"model.fallback", "message.appended"}, "", ""}, [&mu](const lifecycle_event& e) {
                                 std::lock_guard g(mu);
                                 if (e.type == "model.fallback")
                                   std::cout << "  (fallback " << json::get_string(e.data, "from").value_or("") << " -> "
                                             << json::get_string(e.data, "to").value_or("") << ": "
                                             << json::get_string(e.data, "reason").value_or("") << ")\n";
                                 else if (json::get_string(e.data, "role") == "toolResult")
                                   std::cout << "  (a tool result was stored)\n";
                               }});
  auto started = runtime::runtime::start(opt);
  if (!started.ok()) {
    std::cerr << "provider_host: " << started.error().message() << "\n";
    return 2;
  }
  auto& rt = **started;
  int failed = 0;
  for (const auto& text : messages) {
    chat_event ev;
    ev.channel = "cli";
    ev.peer_id = "host";
    ev.text = text;
    std::cout << "> " << text << "\n";
    const turn_outcome out = rt.send(ev).get();
    rt.settle();
    if (!out.st.ok()) {
      std::cout << "  ! " << out.st.message() << "\n";
      ++failed;
    } else {
      std::cout << "< " << (out.reply ? *out.reply : out.command_output) << "\n";
    }
  }
  const auto stats = setup->runner->stats();
  std::cout << "runner: " << stats.http_requests << " request(s), " << stats.retries << " retr(ies), "
            << stats.fallbacks << " fallback(s), " << stats.tool_calls << " tool call(s)\n";
  (void)rt.stop();
  return failed ? 1 : 0;
}
