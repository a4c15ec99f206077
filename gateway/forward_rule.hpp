// forward_rule: whether a session-keyed call is this node's to serve, or goes to the node that
// owns the session's shard (issue #36, "any node serves any client"), with no I/O:
//   - forwarded methods: one row of forwarded_methods() each, naming the param that holds the
//     session and what a call without it means (it runs here; the agent's main session, as
//     chat.startup opens it; a new key drawn by the forwarder, as sessions.create makes one).
//     Any other method runs here;
//   - a call that came over a node link (is_node_link) is always served here: one hop at most,
//     so two nodes with different views of the owners cannot pass a call back and forth (the
//     owner refuses a shard it does not hold, and the client retries);
//   - a key that does not resolve runs here (the local handler names what is wrong with it);
//   - owner local: here; remote: forward to its address; unknown: refused UNAVAILABLE,
//     retryable, with retryAfterMs (nobody serves the shard now: placement, handoff, failover).
// A node link is a connection whose connect said client.id "gateway-client", mode "backend"
// and a displayName beginning "sessionrt-node " (node_link_identity); the mark only withholds
// forwarding, it grants nothing (the token and scopes are checked as for any client).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/client_protocol.hpp"
#include "gateway/connection_state.hpp"

namespace sessionrt::gateway {

// Where the shard of a session lives now, as the cluster layer tells the gateway.
struct shard_route {
  enum class where { local, remote, unknown };
  where at = where::local;
  std::string shard;    // "main/17", for messages
  std::string node;     // remote: the owner's id
  std::string address;  // remote: "host:port" of its gateway
  std::string why;      // unknown: one sentence
};

struct forward_verdict {
  enum class kind { serve_here, forward, refuse };
  kind what = kind::serve_here;
  std::string node, address;  // forward
  frame_error error;          // refuse
};

inline constexpr std::int64_t kForwardRetryAfterMs = 1000;

// One forwarded method. `without_key`: what a call that does not give key_param is routed by.
struct forwarded_method {
  enum class keyless {
    runs_here,     // nothing to route by: the local handler answers (names the missing param)
    main_session,  // the agent's main session (chat.startup without sessionKey, shortId, slugHint)
    new_key,       // a key the forwarder draws and puts into the params (sessions.create)
  };
  std::string_view method, key_param;
  keyless without_key = keyless::runs_here;
};
// The table: chat.send, chat.abort, chat.history, chat.startup, commands.list ("sessionKey");
// sessions.patch, sessions.reset, sessions.describe, sessions.delete, sessions.compact,
// sessions.create, sessions.messages.subscribe ("key").
const std::vector<forwarded_method>& forwarded_methods();
const forwarded_method* find_forwarded(std::string_view method);
// The param naming the session of a forwarded method; empty: the method is not forwarded.
std::string_view forwarded_key_param(std::string_view method);

// Whether an event about a session (sessions.changed, session.message) that node `peer` sent
// this node is passed on to this node's subscribers: only when `route` (this node's view of the
// session's owner) names `peer`. So each event is relayed once, by the node whose sessions it
// is about: a relay that comes back, or an old owner's event after the shard moved here, is
// dropped (this node's own events of the session reach its subscribers directly).
bool relay_from(std::string_view peer, const shard_route& route);

// `store_key`: the call's session as the routing rules resolve it (nullopt: it does not resolve);
// `route`: the owner of its shard (asked only when a store key is given).
forward_verdict decide_forward(std::string_view method, bool from_node_link, const std::optional<std::string>& store_key,
                               const shard_route& route);

// UNAVAILABLE {retryable: true, retryAfterMs, details: {reason, node?, shard?}}: what a client is
// told when the owner cannot be reached or is not known now (reason: owner_unknown,
// node_unreachable, node_timeout, link_lost).
frame_error forward_unavailable(std::string message, std::string_view reason, const std::string& node = {},
                                const std::string& shard = {});

client_identity node_link_identity(const std::string& token, const std::string& self_node_id,
                                   const std::string& version);
bool is_node_link(const client_info& who);

// "host:port" or "[v6]:port" as a node's address; nullopt when it is not one.
struct host_port {
  std::string host;
  std::uint16_t port = 0;
};
std::optional<host_port> parse_address(std::string_view address);

}  // namespace sessionrt::gateway
