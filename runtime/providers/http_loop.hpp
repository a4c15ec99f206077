// http_loop: streaming HTTP calls over libcurl's multi-socket interface, driven by one libuv
// loop on one thread of its own (no thread per call; nothing ever blocks the caller). TLS is
// verified, HTTP/2 is used where the server offers it, proxies come from the environment
// (http_proxy / https_proxy / no_proxy, as curl reads them; loopback hosts never use one).
//
// Contract:
//   - start_call() may be called from any thread; it returns a call id at once. The call's
//     callbacks run on the loop thread, in order: on_head once (status + headers, when a
//     response started), on_body for each piece of the body as it arrives, on_done exactly
//     once (also after cancel(), with errc::cancelled). A callback must not block.
//     on_head comes with the first body byte, or at the end of a successful transfer without
//     body; a call that fails before any body byte (timeout, reset, cancel) gets no on_head.
//     Header names are lower-cased; only the final response's headers are kept (a "100
//     Continue" or a proxy's CONNECT reply is dropped).
//   - cancel(id) from any thread aborts the transfer at once: the connection is closed (the
//     server sees it; over HTTP/2 the stream is reset), on_done(cancelled) follows on the loop
//     thread. Called from one of the call's own callbacks, no further on_head / on_body comes.
//     Cancelling a finished or unknown id does nothing.
//   - Timeouts (0 = none): connect_timeout_ms to a connected socket, first_byte_timeout_ms
//     from the start to the first response byte (a header byte counts), idle_timeout_ms between
//     two reads after that. A timeout ends the call with errc::timeout and a sentence naming
//     which one ("no response within N ms", "stream idle for N ms", "connect timed out").
//   - Errors (DNS, refused, reset, TLS) end the call with errc::io_error and curl's text; a
//     non-2xx status is not an error here: on_head tells it, the body follows, on_done is ok.
//     Messages name the URL's host, never the URL's path or query nor a header (keys live
//     there). A malformed URL / header / method ends the call with errc::invalid_argument.
//   - The loop owns each handler until its on_done returned. The destructor cancels what is
//     in flight (each gets its on_done, also calls started meanwhile from an on_done) and joins
//     the thread; it must not run on the loop thread (from a callback).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::providers {

using http_headers = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::string method = "POST";
  std::string url;
  http_headers headers;   // sent as given (names as written); no "Expect: 100-continue" is added
  std::string body;
  std::int64_t connect_timeout_ms = 30000;
  std::int64_t first_byte_timeout_ms = 0;
  std::int64_t idle_timeout_ms = 0;
};

struct http_response_head {
  long status = 0;
  http_headers headers;   // names lower-cased, in arrival order
  // The first value of a header (name case-insensitive), or "".
  std::string_view header(std::string_view name) const;
};

class http_handler {
 public:
  virtual ~http_handler() = default;
  virtual void on_head(const http_response_head& head) = 0;
  virtual void on_body(std::string_view bytes) = 0;
  virtual void on_done(status st) = 0;
};

class http_loop {
 public:
  using call_id = std::uint64_t;
  struct options {
    std::size_t max_host_connections = 0;  // 0 = no bound (HTTP/2 multiplexes)
  };
  // Starts the loop thread (curl_global_init is done once per process). Two overloads, not a
  // default argument: GCC rejects `options opt = {}` inside http_loop (the nested struct's
  // member initializers are not usable before http_loop is complete).
  static result<std::unique_ptr<http_loop>> start();
  static result<std::unique_ptr<http_loop>> start(options opt);
  ~http_loop();
  http_loop(const http_loop&) = delete;
  http_loop& operator=(const http_loop&) = delete;

  call_id start_call(http_request request, std::shared_ptr<http_handler> handler);
  void cancel(call_id id);
  // Calls in flight now: from start_call() until just before their on_done (any thread).
  std::size_t in_flight() const;

 private:
  struct impl;
  explicit http_loop(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace sessionrt::providers
