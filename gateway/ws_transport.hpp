// ws_transport: the libuv / libhttp-parser / libwslay glue of the gateway (one loop thread).
// It accepts TCP connections on bind:port, parses each one's HTTP request with http_parser,
// answers GET /healthz (JSON) and GET /metrics (Prometheus text, bearer token required), and
// upgrades GET with `Upgrade: websocket` (Sec-WebSocket-Accept = base64(SHA-1(key + GUID)) via
// OpenSSL; permessage-deflate is declined by not answering it). WebSocket framing is wslay's.
// Each connection's protocol state is a connection_state; requests go through method_table:
// on_loop methods run on the loop, the others on a thread each (see queue()), and their answers come
// back to the loop (a connection gone meanwhile is counted and skipped).
// Limits: gateway.maxConnections (past it: close 1008 "too many connections"), 64 KiB per message before connect then
// maxPayload (wslay closes 1009), maxBufferedBytes of unsent output (past it: close 1008 "slow
// consumer" queued after what is unsent, nothing more queued, the socket closed when the peer
// answers or 10 s later), handshake timeout (close 1008).
// frame_sink is implemented here: event_to / broadcast / to_session / after / run_later post to
// the loop and are safe from any thread, also after stop (then they do nothing). to_session
// finds the connections watching a session key in a session_watchers index (O(watchers)).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/gateway_core.hpp"
#include "messages/status.hpp"

namespace sessionrt::gateway {

struct transport_options {
  std::string bind = "127.0.0.1";
  int port = 18789;
  std::string token;
  std::size_t max_connections = 1024;
  std::size_t max_buffered_bytes = 50u << 20;
  std::size_t max_payload = 25u << 20;
  std::int64_t tick_interval_ms = 30000;
  std::int64_t handshake_timeout_ms = 10000;
  bool handle_signals = false;
  // Method calls that may block on the runtime (reads, admin, /metrics) running at once; the
  // rest wait their turn (gateway/method_runner.hpp).
  std::size_t method_threads = 8;
};

class ws_transport final : public frame_sink {
 public:
  ws_transport(transport_options options, gateway_core& core);
  ~ws_transport() override;

  status listen();  // binds and listens (before run); port() is then the bound port
  void run();       // the loop thread's body: returns after stop
  void request_stop();  // any thread: closes every connection (1001) and ends the loop
  int port() const { return port_; }
  std::function<void()> on_signal;  // SIGTERM / SIGINT (loop thread); set before run()

  void event_to(std::uint64_t conn, std::string name, boost::json::value payload) override;
  void broadcast(audience who, std::string name, boost::json::value payload) override;
  bool has_audience(audience who) const override;
  void to_session(std::uint64_t origin, std::string session_key, std::string name,
                  boost::json::value payload) override;
  void after(std::chrono::milliseconds delay, std::function<void()> fn) override;
  void run_later(std::function<void()> fn) override;

  struct conn;
  struct work;
  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  int port_ = 0;
};

}  // namespace sessionrt::gateway
