// http_front: the HTTP side of a gateway connection, between ws_socket and frame_dispatch (as
// h2o's HTTP/1 layer sits between its socket and its handlers): it feeds what the socket reads
// to the connection's http_request (libhttp-parser) and, once the request is complete, answers
// one request per connection and ends the socket after the answer:
//   GET /healthz  JSON {ok, uptimeMs, connections, port, protocol}
//   GET /metrics  Prometheus text, with Authorization: Bearer <gateway token> (else 401). The
//                 runtime's figures (and the disk use under <state>/agents, read through
//                 storage::fs) are sampled on a method worker; when the workers' queue is full
//                 the answer is 503 with Retry-After, never an unbounded wait;
//   other GETs    the Control UI's (control_ui.hpp), else 404; a method other than GET 405;
//   a request that does not parse 400; one not complete within the request timeout 408;
//   GET with Upgrade: websocket (and Sec-WebSocket-Key, Sec-WebSocket-Version: 13, else 400):
//                 101 with Sec-WebSocket-Accept = base64(SHA-1(key + GUID)) (OpenSSL);
//                 permessage-deflate is declined by not answering it. The socket then speaks
//                 WebSocket (64 KiB messages until connect) and the host admits it or not.
// Contract: loop thread only, but for the /metrics job. Every refusal is counted in /metrics.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "gateway/gateway_core.hpp"
#include "gateway/http_request.hpp"
#include "gateway/method_runner.hpp"
#include "gateway/ws_socket.hpp"
#include "storage/fs.hpp"

namespace sessionrt::gateway {

// What http_front asks of the transport, on the loop thread.
class http_host {
 public:
  virtual ~http_host() = default;
  // The socket answered 101 and speaks WebSocket: the host admits it (challenge, handshake
  // deadline) or refuses it with a close frame (gateway.maxConnections, stopping).
  virtual void upgraded(ws_socket& sock) = 0;
  virtual std::size_t websockets() const = 0;          // /healthz "connections"
  virtual void to_loop(std::function<void()> fn) = 0;  // any thread: fn on the loop thread
  virtual ws_socket* socket_of(std::uint64_t conn) = 0;  // null: gone
};

struct http_front_options {
  std::string token;
  std::int64_t request_timeout_ms = 10000;
  std::int64_t busy_retry_after_ms = 1000;  // Retry-After of a 503 (rounded up to seconds)
};

class http_front {
 public:
  http_front(http_front_options opt, gateway_core& core, method_runner& workers, storage::fs& files, http_host& host);

  // What the socket read while in HTTP mode.
  void on_bytes(ws_socket& sock, http_request& req, const char* data, std::size_t n);
  // The request deadline passed before the request was complete: 408.
  void request_timeout(ws_socket& sock);

 private:
  void route(ws_socket& sock, http_request& req);
  void metrics(ws_socket& sock, http_request& req);
  void upgrade(ws_socket& sock, http_request& req);

  http_front_options opt_;
  gateway_core& core_;
  method_runner& workers_;
  storage::fs& files_;
  http_host& host_;
};

// One HTTP/1.1 answer with Connection: close, written; the socket ends after it.
void http_reply(ws_socket& sock, int code, const char* reason, const std::string& type, const std::string& body,
                const std::string& extra_headers = "");

}  // namespace sessionrt::gateway
