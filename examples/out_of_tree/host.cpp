// host: the smallest program that embeds an installed sessionrt. It starts a runtime on a fresh
// temporary state dir with the simulated model, sends one direct message, and checks that the
// turn succeeded with a non-empty reply. Exit 0 then; otherwise 1 with the reason on stderr.
// Then it asks for the config's model runner (none is configured: the built-in provider runners
// link and say so) and runs the gateway on the same state dir for a moment (port 0), so the
// installed package is shown to carry the providers and the gateway too.
// The state dir is removed at the end either way.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "gateway/gateway_server.hpp"
#include "runtime/model_setup.hpp"
#include "runtime/runtime.hpp"
#include "runtime/simulated_model.hpp"
#include "storage/system_clock.hpp"

using namespace sessionrt;

namespace {

int fail(const std::string& why) {
  std::cerr << "host: " << why << "\n";
  return 1;
}

int run(const std::string& state) {
  runtime::runtime_options opt;
  opt.settings.state_dir = state;
  opt.runner = std::make_shared<runtime::simulated_model>(storage::real_clock());
  auto started = runtime::runtime::start(opt);
  if (!started.ok()) return fail("start failed: " + started.error().to_string());
  runtime::runtime& rt = **started;

  chat_event ev;
  ev.channel = "telegram";
  ev.peer_kind = "direct";
  ev.peer_id = "111";
  ev.text = "Hello from an out-of-tree host.";
  const turn_outcome out = rt.send(ev).get();
  const status stopped = rt.stop();
  if (!out.st.ok()) return fail("the turn failed: " + out.st.to_string());
  if (!out.reply || out.reply->empty()) return fail("the turn gave no reply text");
  if (!stopped.ok()) return fail("stop failed: " + stopped.to_string());
  std::cout << "host: " << out.session_key << " replied: " << *out.reply << "\n";

  auto setup = runtime::runner_for_config(opt.settings);
  if (!setup.ok()) return fail("runner_for_config: " + setup.error().to_string());
  if (setup->runner || setup->said.empty()) return fail("no model is configured, yet a runner was made");
  std::cout << "host: " << setup->said.front() << "\n";
  gateway::gateway_options g;
  g.runtime.settings.state_dir = state;
  g.port = 0;
  g.token = "host-check";
  auto gw = gateway::gateway_server::start(std::move(g));
  if (!gw.ok()) return fail("gateway start failed: " + gw.error().to_string());
  std::cout << "host: a gateway listened on " << (*gw)->url() << "\n";
  if (status s = (*gw)->stop(); !s.ok()) return fail("gateway stop failed: " + s.to_string());
  return 0;
}

}  // namespace

int main() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sessionrt-host-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return fail("cannot create a temporary state dir from " + tmpl);
  const int code = run(tmpl);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
  return code;
}
