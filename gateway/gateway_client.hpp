// gateway_client: a blocking client of a protocol-4 gateway (ours or OpenClaw's) over ws_client.
// - connect() waits for the server's connect.challenge, sends `connect` (protocol 4, the token,
//   client.id, role operator, scopes) and keeps the hello-ok payload. A refused connect is an
//   error carrying the server's code and message; close_code() then tells the close code.
// - request() sends one `req` and waits for the `res` with its id; responses may come in any
//   order, so others are kept for their own wait, and events read meanwhile are queued (or given
//   to the event handler, in the caller's thread, if one is set; next_event() always returns
//   events, handler or not). A server error is a status
//   "gateway refused <method>: CODE: message"; last_error() keeps its code and details.
// - Events are checked for contiguous seq (an "event gap" is an error of next_event()).
// - One thread at a time; nothing runs in the background (ticks are read when the caller reads).
#pragma once
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gateway/client_protocol.hpp"
#include "gateway/ws_client.hpp"
#include "messages/status.hpp"

namespace sessionrt::gateway {

struct gateway_client_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 18789;
  client_identity identity;
  std::chrono::milliseconds connect_timeout{10000};  // TCP + upgrade + challenge + hello-ok
  std::size_t max_message_bytes = 64u << 20;
};

struct gateway_event {
  std::string event;
  boost::json::value payload;
  std::optional<std::int64_t> seq;
};

class gateway_client {
 public:
  using event_handler = std::function<void(const gateway_event&)>;

  static result<std::unique_ptr<gateway_client>> connect(const gateway_client_options& options);
  // Takes an already upgraded socket (tests that send their own connect frames use ws_client).
  static result<std::unique_ptr<gateway_client>> handshake(std::unique_ptr<ws_client> socket,
                                                           const client_identity& who,
                                                           std::chrono::milliseconds timeout);

  const boost::json::object& hello() const { return hello_; }
  const std::string& challenge_nonce() const { return nonce_; }

  result<boost::json::value> request(const std::string& method, const boost::json::value& params,
                                     std::chrono::milliseconds timeout);
  // The two halves of request(), for callers that keep several requests in flight.
  result<std::string> send_request(const std::string& method, const boost::json::value& params);
  result<boost::json::value> wait_response(const std::string& id, std::chrono::milliseconds timeout);

  // The next event (queued first, then read from the socket); errc::timeout if none in time.
  result<gateway_event> next_event(std::chrono::milliseconds timeout);
  // When set, events read while a response is awaited (request / wait_response) go to `h` instead
  // of into the queue; next_event() always returns them.
  void on_event(event_handler h) { handler_ = std::move(h); }

  const std::optional<gateway_error>& last_error() const { return last_error_; }
  std::optional<std::uint16_t> close_code() const { return ws_->close_code(); }
  ws_client& socket() { return *ws_; }
  status close() { return ws_->close(1000); }

 private:
  explicit gateway_client(std::unique_ptr<ws_client> ws) : ws_(std::move(ws)) {}
  // Reads one frame and files it (response map / event queue / handler).
  status read_one(std::chrono::steady_clock::time_point deadline);
  status file_event(server_frame f);

  std::unique_ptr<ws_client> ws_;
  boost::json::object hello_;
  std::string nonce_;
  std::uint64_t next_id_ = 1;
  std::map<std::string, std::string> methods_;  // pending id -> method, for error messages
  std::map<std::string, server_frame> responses_;  // arrived, not yet waited for
  std::deque<gateway_event> events_;
  event_handler handler_;
  event_sequence seq_;
  status seq_error_;
  bool in_wait_ = false;
  std::optional<gateway_error> last_error_;
};

}  // namespace sessionrt::gateway
