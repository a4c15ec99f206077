// host: the smallest program that embeds an installed sessionrt. It starts a runtime on a fresh
// temporary state dir with the simulated model, sends one direct message, and checks that the
// turn succeeded with a non-empty reply. Exit 0 then; otherwise 1 with the reason on stderr.
// The state dir is removed at the end either way.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

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
