#include "gateway/gateway_command.hpp"

#include <spdlog/spdlog.h>

#include <ostream>

#include "gateway/gateway_server.hpp"
#include "runtime/config.hpp"

namespace sessionrt::gateway {

void add_gateway_command(CLI::App& app, runtime::cli_state& st) {
  struct args {
    std::string state_dir, config, bind = "127.0.0.1", token;
    int port = 18789;
  };
  auto a = std::make_shared<args>();
  auto* cmd = app.add_subcommand("gateway", "Run sessionrt as a gateway speaking OpenClaw's protocol (v4) on one port");
  cmd->add_option("--state-dir", a->state_dir, "state directory (default: the config's stateDir, $SESSIONRT_STATE_DIR, ~/.sessionrt)");
  cmd->add_option("--config", a->config, "the runtime's config file (runtime/config.hpp)");
  auto* bind = cmd->add_option("--bind", a->bind, "address to listen on (default gateway.bind, 127.0.0.1); beyond loopback clients want wss:// (a TLS proxy)");
  auto* port = cmd->add_option("--port", a->port, "port (default gateway.port, 18789; 0: any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--token", a->token,
                  "auth token (else $SESSIONRT_GATEWAY_TOKEN, the config's gateway.auth.token, <state>/gateway.token)");
  cmd->callback([a, &st, bind, port] {
    std::ostream& err = *st.io.err;
    gateway_options o;
    if (!a->config.empty()) {
      auto loaded = runtime::load_config_file(*st.io.files, a->config, st.io.env);
      if (!loaded.ok()) {
        err << "sessionrt gateway: " << loaded.error().message() << "\n";
        st.exit_code = 2;
        return;
      }
      for (const auto& w : loaded->warnings) err << "warning: " << w << "\n";
      o.runtime.settings = std::move(loaded->settings);
    }
    if (!a->state_dir.empty()) o.runtime.settings.state_dir = a->state_dir;
    const auto& gw = o.runtime.settings.gateway;
    o.bind = bind->count() ? a->bind : gw.bind;
    const bool loopback = o.bind.rfind("127.", 0) == 0 || o.bind == "::1" || o.bind == "localhost";
    if (!loopback && !bind->count()) {
      err << "sessionrt gateway: gateway.bind " << o.bind
          << " is beyond loopback; pass --bind " << o.bind << " to listen there (clients will want wss://)\n";
      st.exit_code = 2;
      return;
    }
    o.port = port->count() ? a->port : static_cast<int>(gw.port);
    o.token = a->token;
    o.config_token = gw.auth_token;
    o.max_connections = gw.max_connections;
    o.max_buffered_bytes = gw.max_buffered_bytes;
    o.max_payload = gw.max_payload;
    o.install_signal_handlers = true;
    auto server = gateway_server::start(std::move(o));
    if (!server.ok()) {
      err << "sessionrt gateway: " << server.error().message() << "\n";
      st.exit_code = 2;
      return;
    }
    *st.io.out << "sessionrt gateway listening on " << (*server)->url() << " (state " << (*server)->rt().state_dir()
               << ")" << std::endl;
    (*server)->wait();
    err << "sessionrt gateway: stopping\n";
    auto stopped = (*server)->stop();
    if (!stopped.ok()) {
      err << "sessionrt gateway: stop: " << stopped.message() << "\n";
      st.exit_code = 1;
      return;
    }
    st.exit_code = 0;
  });
}

}  // namespace sessionrt::gateway
