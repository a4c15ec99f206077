// ws_transport: the gateway's event loop (one thread, libuv) and the connections on it, in the
// layers h2o and nginx keep: ws_socket (libuv + wslay: one connection's bytes, frames, deadlines
// and back-pressure), http_front (libhttp-parser: /healthz, /metrics, the Control UI, the
// upgrade), frame_dispatch (no libuv: the handshake and each request through method_table) and
// method_runner (the bounded pool of method workers for calls that may wait on the runtime).
// The transport accepts TCP connections on bind:port, admits them (admission.hpp), keeps them by
// id, wires each socket's callbacks to the layer that owns the phase, posts work to the loop
// from any thread and batches the frames that posted work queues (each connection is written
// once per batch).
// Limits (every refusal counted in /metrics, gateway_metrics.hpp):
//   - admission (gateway/admission.hpp): a socket accepted within fd_reserve descriptors of
//     RLIMIT_NOFILE, or past max_unauthenticated sockets that have not completed connect, is
//     closed at once; past max_connections WebSockets the upgrade is closed 1008 "too many
//     connections";
//   - every phase has a deadline: the HTTP request (head and body) request_timeout_ms from
//     accept (then 408 and close), the handshake handshake_timeout_ms from the upgrade (close
//     1008), a WebSocket message begun and not finished message_timeout_ms (close 1008
//     "message timeout"), a closing socket kCloseGraceMs (10 s for a slow consumer);
//   - payload: 64 KiB per message before connect, then max_payload (close 1009);
//   - output: max_buffered_bytes unsent per connection (ws_socket.hpp: close 1008 "slow
//     consumer"), pongs coalesced;
//   - requests: at most max_requests_in_flight calls of one connection on the method workers
//     and max_queued_requests waiting in all; past either the request is answered UNAVAILABLE
//     {retryable: true, retryAfterMs} at once (a /metrics scrape 503). The workers serve
//     connections in turn.
// Stopping: each open connection gets a `shutdown` event, then close 1001 (queued frames go
// before the close frame).
// frame_sink is implemented here: event_to / broadcast / to_session / after / run_later post to
// the loop and are safe from any thread, also after stop (then they do nothing). to_session
// finds the connections watching a session key through frame_dispatch (O(watchers)).
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
#include "storage/fs.hpp"

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
  std::size_t max_requests_in_flight = 32;   // per connection, on the method runner
  std::size_t max_queued_requests = 1024;    // waiting for a method thread, all connections
  std::int64_t busy_retry_after_ms = 1000;   // retryAfterMs of a busy answer
  std::size_t max_unauthenticated = 64;      // sockets that have not completed connect
  std::size_t fd_reserve = 64;               // descriptors kept free under RLIMIT_NOFILE
  std::int64_t request_timeout_ms = 10000;   // the HTTP request, head and body, from accept
  std::int64_t message_timeout_ms = 30000;   // a WebSocket message begun and not finished
  storage::fs* files = nullptr;              // what /metrics measures the disk with; null: posix_fs()
};

class ws_transport final : public frame_sink {
 public:
  ws_transport(transport_options options, gateway_core& core);
  ~ws_transport() override;

  status listen();  // binds and listens (before run); port() is then the bound port
  void run();       // the loop thread's body: returns after stop
  void request_stop();  // any thread: closes every connection (1001) and ends the loop
  // Returns once every job on the method workers has returned (after the loop ended, before the
  // runtime they use goes away).
  void wait_idle();
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
  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  int port_ = 0;
};

}  // namespace sessionrt::gateway
