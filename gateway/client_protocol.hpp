// client_protocol: the client's side of OpenClaw's gateway frames (protocol 4), no I/O.
// - parse_server_frame() reads one text frame from the server: a `res` (id, ok, payload or
//   error) or an `event` (name, payload, seq). It refuses what OpenClaw's client drops (not JSON,
//   not an object, an unknown type, a res without id, an error without code or message) with
//   an errc::corrupt error naming the field.
// - request_frame() / connect_params() build what the client sends; the connect params have
//   the CLI's shape (minProtocol = maxProtocol = 4, client.id, role operator, scopes, token).
// - event_sequence checks that `seq` rises by exactly 1 per connection (the challenge has none),
//   as OpenClaw's TUI does ("event gap").
// - scopes_for_method() is the least operator scope OpenClaw's CLI asks for a method.
#pragma once
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::gateway {

inline constexpr int kProtocolVersion = 4;

struct gateway_error {
  std::string code;     // INVALID_REQUEST, FORBIDDEN, UNAVAILABLE, ...
  std::string message;
  boost::json::value details;  // null when absent
  bool retryable = false;
};

struct server_frame {
  enum class kind { response, event };
  kind type = kind::event;
  // response
  std::string id;
  bool ok = false;
  gateway_error error;  // when !ok
  // event
  std::string event;
  std::optional<std::int64_t> seq;
  // both
  boost::json::value payload;  // null when absent
};

result<server_frame> parse_server_frame(std::string_view text);

std::string request_frame(std::string_view id, std::string_view method, const boost::json::value& params);

struct client_identity {
  std::string token;
  std::string client_id = "cli";  // must be one of the schema's enum: cli, openclaw-tui, gateway-client, ...
  std::string mode = "cli";
  std::string version = "sessionrt";
  std::string display_name;  // omitted when empty
  std::string instance_id;   // a fresh uuid when empty
  std::vector<std::string> scopes = {"operator.read"};
};

boost::json::object connect_params(const client_identity& who);

// "CODE: message" as one status; INVALID_REQUEST -> invalid_argument, FORBIDDEN -> unsupported,
// UNAVAILABLE -> io_error, anything else -> internal.
status to_status(const gateway_error& e, std::string_view method);

class event_sequence {
 public:
  // ok, or an errc::corrupt "event gap" naming the expected and the received seq. An event
  // without seq is accepted (the pre-handshake challenge).
  status observe(const server_frame& f);
  std::optional<std::int64_t> last() const { return last_; }

 private:
  std::optional<std::int64_t> last_;
};

std::string scope_for_method(std::string_view method);

}  // namespace sessionrt::gateway
