// loopback_server: a scripted HTTP/1.1 server on 127.0.0.1 (a port the kernel picks), for tests
// of the HTTP loop and of the model runners built on it (429 with retry-after then success, 500
// then success, a stream reset midway, a silent server past the idle timeout, a client cancel).
//
// One thread of its own polls the listening socket and every connection (plain POSIX sockets),
// so a stalled or delayed response never blocks another one or the test. Each request (method,
// path, headers, body: Content-Length bodies only) is recorded, then answered as the script says
// for it: a status, headers, body pieces with delays before them, and an ending (complete, stall
// forever, close, reset). Keep-alive works: after a complete response the connection reads its
// next request. The server also counts the connections its clients closed, so a test can wait
// until "the server sees the close".
//
// Threads: the responder runs on the server thread (it must not block, it may not call back
// into the server); every other method may be called from any thread. The destructor closes all
// connections and joins the thread. Errors setting up the socket throw std::runtime_error (test
// code only).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace sessionrt::testing {

struct recorded_request {
  std::string method;
  std::string path;  // the request target as sent, query included
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;
  // The first value of a header (name case-insensitive), or "".
  std::string header(std::string_view name) const;
};

// How one request is answered.
struct scripted_response {
  enum class ending : std::uint8_t {
    complete,  // the body ends properly; the connection stays open for the next request
    stall,     // nothing more is sent; the connection stays open until the client leaves
    close,     // the server closes the connection (FIN) after what was sent
    reset,     // the server resets the connection (RST: SO_LINGER 0) after what was sent
  };
  struct piece {
    std::string bytes;
    int delay_ms = 0;  // waited before this piece is sent
  };

  bool send_head = true;   // false: no status line, no headers, no body; only the ending
  std::string preamble;    // raw bytes before the status line ("HTTP/1.1 100 Continue\r\n\r\n")
  int head_delay_ms = 0;   // waited before the status line
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<piece> body;
  // true: "Transfer-Encoding: chunked", each piece one chunk (the last "0" chunk only when the
  // ending is `complete`). false: "Content-Length"; with any other ending the length declared
  // is one byte more than what is sent, so the client sees the body cut short.
  bool chunked = true;
  ending end = ending::complete;
  bool hold = false;  // nothing is sent until loopback_server::release() was called

  // A complete response with this body in one piece.
  static scripted_response text(int status, std::string body);
  // A complete response in pieces, `delay_ms` before each piece after the first.
  static scripted_response stream(int status, std::vector<std::string> pieces, int delay_ms = 0);
  // Never answers (not even a status line); the connection stays open.
  static scripted_response silent();
  // The request is read, then the connection is reset before any answer.
  static scripted_response reset_at_once();

  scripted_response& with_header(std::string name, std::string value);
  scripted_response& ending_with(ending e);
  scripted_response& held();
};

class loopback_server {
 public:
  // Answers the `index`th request (0-based, over all connections) of this server.
  using responder = std::function<scripted_response(const recorded_request& request, std::size_t index)>;

  struct options {
    // false: the server listens but never accepts; its accept queue is filled at start, so a
    // client's connect hangs (connect-timeout tests).
    bool accept = true;
  };

  struct stats {
    std::size_t connections = 0;    // accepted
    std::size_t requests = 0;       // recorded
    std::size_t client_closes = 0;  // connections the client closed (FIN or RST), idle ones too
    std::size_t client_aborts = 0;  // of those, closed while a response was unfinished or stalled
  };

  // Request i gets script[min(i, size - 1)]; an empty script answers 200 "ok".
  explicit loopback_server(std::vector<scripted_response> script);
  loopback_server(std::vector<scripted_response> script, options opt);
  explicit loopback_server(responder respond);
  loopback_server(responder respond, options opt);
  ~loopback_server();
  loopback_server(const loopback_server&) = delete;
  loopback_server& operator=(const loopback_server&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port><path>".
  std::string url(std::string_view path = "/") const;

  std::vector<recorded_request> requests() const;
  stats snapshot() const;
  // Waits (up to `timeout`) until `pred(stats)` holds; returns whether it did.
  bool wait_for(const std::function<bool(const stats&)>& pred, std::chrono::milliseconds timeout) const;
  bool wait_for_requests(std::size_t n, std::chrono::milliseconds timeout) const;
  bool wait_for_client_aborts(std::size_t n, std::chrono::milliseconds timeout) const;

  // Lets held responses (and every later one) go.
  void release();

 private:
  struct conn;
  void run();
  void poll_once();
  void accept_all();
  void on_readable(conn& c);
  void parse_requests(conn& c);
  void respond(conn& c, const recorded_request& request, std::size_t index);
  void pump(conn& c);
  void finish_response(conn& c);
  void client_closed(conn& c);
  void close_conn(conn& c, bool reset);
  void saturate_backlog();
  void wake();

  responder respond_;
  options opt_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::vector<int> fillers_;  // connections that fill the accept queue (options::accept false)

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<recorded_request> requests_;  // under mu_
  stats stats_;                             // under mu_
  bool released_ = false;                   // under mu_
  bool stop_ = false;                       // under mu_

  std::vector<std::unique_ptr<conn>> conns_;  // server thread only
  std::thread thread_;
};

}  // namespace sessionrt::testing
