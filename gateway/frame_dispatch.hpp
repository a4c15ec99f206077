// frame_dispatch: what a WebSocket connection's text frames lead to, with no libuv and no wslay
// (it sits above ws_socket as h2o's handlers sit above its sockets, and is tested without any):
// the connect.challenge at the upgrade, the connect handshake (the token, the scopes, the
// Control UI's Origin check, then hello-ok and the full payload limit), and each request
// through method_table: its scope, its params being an object, then the call — on the loop for
// on_loop methods, else on a method worker (dispatch_port::run_off_loop), whose answer comes
// back to the loop (a connection gone meanwhile is counted and skipped).
// Refusals are counted in gateway_metrics by their fault (connection_state.hpp), never by the
// text of a message. Busy answers: at most max_requests_in_flight calls of one connection on the
// workers, and the workers' queue bound (run_off_loop says no): past either the request is
// answered UNAVAILABLE {retryable: true, retryAfterMs} at once.
// Watches: chat.send / chat.history / chat.startup / sessions.describe make the connection watch
// the session (before the call runs, so the run's first delta reaches it); audience_of() gives
// the connections a session's `chat` events go to, in O(watchers).
// Contract: every call on the loop thread but sessions_subscribers() (any thread). The port and
// the core outlive the dispatcher; a dispatch_conn lives until closed() was called for it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/connection_state.hpp"
#include "gateway/gateway_core.hpp"
#include "gateway/method_table.hpp"
#include "gateway/session_watchers.hpp"

namespace sessionrt::gateway {

struct dispatch_options {
  std::string token;
  std::size_t max_payload = 25u << 20;          // after connect (hello-ok's policy says so)
  std::size_t max_buffered_bytes = 50u << 20;   // hello-ok's policy
  std::int64_t tick_interval_ms = 30000;        // hello-ok's policy
  std::size_t max_requests_in_flight = 32;      // per connection, on the workers
  std::size_t max_queued_requests = 1024;       // the workers' queue bound (named in the busy answer)
  std::int64_t busy_retry_after_ms = 1000;      // retryAfterMs of a busy answer
};

// One connection as the dispatcher sees it; the transport keeps it beside the socket.
struct dispatch_conn {
  explicit dispatch_conn(std::uint64_t conn_id) : id(conn_id) {}
  std::uint64_t id;
  connection_state state;
  std::size_t in_flight = 0;  // requests on the workers, not answered yet
  const std::map<std::string, std::string>* http_headers = nullptr;  // the upgrade's (Origin check)
};

// What the dispatcher asks of the transport, on the loop thread.
class dispatch_port {
 public:
  virtual ~dispatch_port() = default;
  virtual void send(dispatch_conn& c, const std::string& text) = 0;  // one text frame, queued
  virtual void close(dispatch_conn& c, int code, const std::string& reason) = 0;  // after what is queued
  // connect succeeded: the handshake deadline ends, the payload limit becomes max_payload and the
  // admission no longer counts the socket as unauthenticated.
  virtual void connected(dispatch_conn& c) = 0;
  // Runs `job` on a method worker, in turn with other connections' jobs; false when the queue
  // is full (then `job` is left to the caller).
  virtual bool run_off_loop(std::uint64_t conn, std::function<void()>& job) = 0;
  virtual void to_loop(std::function<void()> fn) = 0;  // any thread: fn on the loop thread
  virtual dispatch_conn* find(std::uint64_t conn) = 0;  // null: the connection is gone
};

class frame_dispatch {
 public:
  frame_dispatch(dispatch_options opt, gateway_core& core, dispatch_port& port);

  // The socket became a WebSocket: the challenge goes first and carries no seq.
  void opened(dispatch_conn& c);
  void on_text(dispatch_conn& c, std::string_view text);
  // The handshake deadline passed: closes 1008 "handshake timeout" unless connect succeeded.
  void handshake_expired(dispatch_conn& c, std::int64_t timeout_ms);
  // The connection is closing: its watches, subscriptions and runner role end.
  void closed(dispatch_conn& c);

  // The connections watching `key`, then `origin` if it does not (each once).
  std::vector<std::uint64_t> audience_of(std::uint64_t origin, const std::string& key) const;
  std::size_t sessions_subscribers() const { return sessions_subscribers_.load(); }
  const dispatch_options& options() const { return opt_; }

 private:
  void connect(dispatch_conn& c, const inbound_frame& f);
  void request(dispatch_conn& c, inbound_frame& f);
  void call_off_loop(dispatch_conn& c, const inbound_frame& f, const method_entry& m, boost::json::object params);
  void answered(std::uint64_t conn, const std::string& id, const method_outcome& out);
  void answer(dispatch_conn& c, const std::string& id, const method_outcome& out);
  void watch(dispatch_conn& c, const std::string& key);
  frame_error busy(std::string message) const;
  boost::json::object hello(const dispatch_conn& c) const;

  dispatch_options opt_;
  gateway_core& core_;
  dispatch_port& port_;
  session_watchers watchers_;  // session key -> the connections watching it
  std::atomic<std::size_t> sessions_subscribers_{0};  // connections with sessions_subscribed
};

// The frames as the protocol writes them (byte-exact compact JSON).
std::string response_ok(const std::string& id, const boost::json::value& payload);
std::string response_error(const std::string& id, const frame_error& e);
std::string event_frame(std::string_view name, const std::string& payload_json, std::int64_t seq);

}  // namespace sessionrt::gateway
