// connection_state: one WebSocket connection's protocol state (OpenClaw gateway protocol v4,
// ../shared/reference/openclaw-gateway-protocol.md), with no I/O: the transport feeds it text
// frames and does what it answers. It holds the handshake phase, the event seq counter (events
// after the handshake count 1, 2, 3 ... per connection; the challenge carries none), the
// scopes granted at connect and the subscriptions. (What the socket has not sent yet is
// ws_socket's: output_budget.hpp.)
// Contract:
//   - on_text() classifies one inbound text frame: a request to dispatch, an error response
//     to send (the connection stays open) or a close (code + reason) after an optional error;
//   - check_connect() decides a `connect` request: hello on success, else the real server's
//     refusal (error + close 1008 / 1002); after success the phase is open;
//   - allowed() says whether the granted scopes cover a method's scope
//     (operator.admin covers write and read, operator.write covers read);
//   - watched session keys: the keys whose `chat` events the connection gets, at most
//     kMaxWatchedKeys (the least recently used falls out), so a connection's cost stays bounded.
#pragma once
#include <boost/json.hpp>
#include <cstdint>
#include <list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sessionrt::gateway {

inline constexpr int kGatewayProtocol = 4;
inline constexpr std::size_t kPreHandshakeMaxPayload = 64 * 1024;

// Close codes of the real server (and RFC 6455's for the transport's own refusals).
namespace close_code {
inline constexpr int normal = 1000;
inline constexpr int going_away = 1001;
inline constexpr int protocol_error = 1002;  // protocol mismatch
inline constexpr int policy = 1008;          // token mismatch, bad handshake, slow consumer
inline constexpr int too_big = 1009;         // a frame over the payload limit
// Too many connections: 1008 with the reason, not 1013 (Try Again Later), which libwslay's
// clients reject as an invalid status and then report no code at all (Node's ws accepts both).
inline constexpr int too_many = 1008;
}  // namespace close_code

enum class method_scope { read, write, admin };
std::string_view scope_name(method_scope s);  // "operator.read" ...

// What a refused frame, connect or request did wrong. Not on the wire (which carries code,
// message and details): the gateway counts refusals and takes decisions by it, never by the
// text of a message.
enum class fault {
  none,
  not_json,           // a frame that is not JSON, or not a JSON object
  bad_frame,          // an object that is not a request frame, or connect once connected
  before_connect,     // a request before connect
  bad_connect,        // connect params that do not validate, or a role this gateway does not serve
  protocol_mismatch,  // connect's protocol range misses ours
  token_missing,
  token_mismatch,
  origin,             // a Control UI Origin not allowed (control_ui.hpp)
  bad_params,         // a method's params that do not validate (param_check.hpp)
};

// A protocol error as the response frame carries it, and its fault.
struct frame_error {
  std::string code = "INVALID_REQUEST";
  std::string message;
  boost::json::value details = nullptr;  // null: no details field
  // ErrorShapeSchema's retryable / retryAfterMs (absent when not set): a busy gateway's
  // UNAVAILABLE says the request may be sent again after retry_after_ms.
  bool retryable = false;
  std::optional<std::int64_t> retry_after_ms;
  fault why = fault::none;  // not sent
  boost::json::object to_json() const;
};

struct close_request {
  int code = close_code::policy;
  std::string reason;
};

struct inbound_frame {
  enum class kind { request, error, close } what = kind::request;
  std::string id;  // the request id (empty when the frame had none)
  std::string method;
  boost::json::value params = nullptr;
  frame_error error;                   // kind::error and kind::close (error.why says why, always set)
  bool respond_first = false;          // kind::close: send `error` for `id` before closing
  close_request close;
};

struct client_info {
  std::string id, version, platform, mode, instance_id, display_name;
  std::string role = "operator";
};

struct connect_verdict {
  bool ok = false;
  frame_error error;       // !ok
  close_request close;     // !ok: the socket is closed after the error
  std::vector<std::string> scopes;  // ok: granted
};

class connection_state {
 public:
  enum class phase { awaiting_connect, open, closed };

  phase current() const { return phase_; }
  inbound_frame on_text(std::string_view text);
  connect_verdict check_connect(const boost::json::value& params, std::string_view expected_token);
  bool allowed(method_scope needed) const;
  const std::vector<std::string>& scopes() const { return scopes_; }
  const client_info& client() const { return client_; }
  void mark_closed() { phase_ = phase::closed; }

  // The next event seq (1, 2, ...). Only events after the handshake count.
  std::int64_t next_seq() { return ++seq_; }
  std::int64_t last_seq() const { return seq_; }

  // chat.send / chat.history / sessions.describe on a key make the connection watch it (the
  // dispatcher keeps the reverse index, frame_dispatch.hpp). added: the key was not watched;
  // evicted: the least recently used key that fell out to stay within kMaxWatchedKeys.
  static constexpr std::size_t kMaxWatchedKeys = 256;
  struct watch_change {
    bool added = false;
    std::optional<std::string> evicted;
  };
  watch_change watch(const std::string& key);
  bool watches(const std::string& key) const { return watch_pos_.count(key) > 0; }
  const std::list<std::string>& watched() const { return watched_; }  // most recent first

  // Subscriptions (the transport and the method handlers on its loop thread set them).
  bool sessions_subscribed = false;
  std::optional<std::uint64_t> events_subscription;  // runtime::subscribe id
  bool runner = false;

 private:
  phase phase_ = phase::awaiting_connect;
  std::int64_t seq_ = 0;
  std::vector<std::string> scopes_;
  client_info client_;
  std::list<std::string> watched_;
  std::unordered_map<std::string, std::list<std::string>::iterator> watch_pos_;
};

// The client ids of ConnectParamsSchema's enum (protocol-schemas.txt).
bool is_known_client_id(std::string_view id);
bool is_known_client_mode(std::string_view mode);

}  // namespace sessionrt::gateway
