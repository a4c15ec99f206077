// gateway_server: sessionrt as a daemon speaking OpenClaw's gateway protocol (v4) on one port:
// WebSocket (the protocol) and HTTP (GET /healthz, GET /metrics) on bind:port.
// start() starts the runtime on the state dir (the model: options.runtime's runner, else the
// built-in simulated model; remote runners that attach with sessionrt.runner.attach take the
// calls while any is attached), then a libuv loop on its own thread, and returns once the port
// is bound (port 0: an ephemeral one, port() tells which). It writes <state>/gateway.json
// {pid, port, bind, startedAt} for discovery; stop() removes it.
// Auth is always on: the token is options.token, else $SESSIONRT_GATEWAY_TOKEN, else the
// config's gateway.auth.token, else <state>/gateway.token (made 0600 with a random token when
// missing). token() tells which one is in force.
// stop(): refuses new connections, closes every socket (1001), stops the runtime (runs
// cancelled, stores flushed, locks released), joins the loop thread. Idempotent; the
// destructor calls it. wait() blocks until stop() ran or a stop was requested (SIGTERM/SIGINT
// when install_signal_handlers was set).
// Errors from start(): the runtime's (another runtime owns the state dir), a port in use, a
// bind address that is not an IP address, a token file that cannot be written.
#pragma once
#include "runtime/providers/tools.hpp"
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gateway/shard_forward.hpp"
#include "messages/status.hpp"
#include "runtime/runtime.hpp"

namespace sessionrt::gateway {

struct gateway_options {
  runtime::runtime_options runtime;  // settings.state_dir is the state dir
  std::string bind = "127.0.0.1";
  int port = 18789;                  // 0 = ephemeral
  std::string token;                 // "" = environment, config, token file
  std::size_t max_connections = 1024;              // gateway.maxConnections
  std::size_t max_buffered_bytes = 50u << 20;      // gateway.maxBufferedBytes (policy.maxBufferedBytes)
  std::size_t max_payload = 25u << 20;             // gateway.maxPayload (policy.maxPayload)
  std::int64_t tick_interval_ms = 30000;           // policy.tickIntervalMs
  std::int64_t handshake_timeout_ms = 10000;       // a connection that sends no connect is closed
  bool install_signal_handlers = false;            // SIGTERM / SIGINT request a stop (the command sets it)
  std::string config_token;                        // gateway.auth.token from the config file
  // The web Control UI's directory (--control-ui); "" = gateway.controlUi.root, else an
  // installed openclaw package's dist/control-ui (gateway/control_ui.hpp), else none.
  std::string control_ui_root;
  bool find_installed_control_ui = false;          // also look for an installed openclaw (the command sets it)
  // Tools the built-in provider runner offers the model (null: none). Used only when the
  // config names a model and the host gives no runner of its own.
  std::shared_ptr<const providers::tool_registry> tools;
};

class gateway_server {
 public:
  static result<std::unique_ptr<gateway_server>> start(gateway_options options);
  ~gateway_server();
  gateway_server(const gateway_server&) = delete;
  gateway_server& operator=(const gateway_server&) = delete;

  int port() const;
  const std::string& bind() const;
  const std::string& token() const;
  std::string url() const;  // ws://bind:port
  runtime::runtime& rt();
  // Lines appended to GET /metrics at each scrape (gateway_metrics::set_extra); null: none.
  void set_extra_metrics(std::function<std::string()> lines);
  // From now on, calls for sessions another node owns are forwarded there (shard_forward.hpp);
  // the object lives until the server is destroyed and its links end first at stop().
  shard_forward& enable_forwarding(forward_options options);
  // Blocks until a stop was requested (signal) or stop() ran.
  void wait();
  status stop();

  struct impl;

 private:
  explicit gateway_server(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace sessionrt::gateway
