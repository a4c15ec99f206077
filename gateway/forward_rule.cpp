#include "gateway/forward_rule.hpp"

#include <charconv>

namespace sessionrt::gateway {

namespace {
constexpr std::string_view kLinkName = "sessionrt-node ";
}

const std::vector<forwarded_method>& forwarded_methods() {
  using keyless = forwarded_method::keyless;
  static const std::vector<forwarded_method> table = {
      {"chat.send", "sessionKey"},
      {"chat.abort", "sessionKey"},
      {"chat.history", "sessionKey"},
      {"chat.startup", "sessionKey", keyless::main_session},
      {"commands.list", "sessionKey"},
      {"sessions.patch", "key"},
      {"sessions.reset", "key"},
      {"sessions.describe", "key"},
      {"sessions.delete", "key"},
      {"sessions.compact", "key"},
      {"sessions.create", "key", keyless::new_key},
      // The owner pushes the session's messages over the node link; shard_forward relays them.
      {"sessions.messages.subscribe", "key"},
  };
  return table;
}

const forwarded_method* find_forwarded(std::string_view method) {
  for (const auto& m : forwarded_methods())
    if (m.method == method) return &m;
  return nullptr;
}

std::string_view forwarded_key_param(std::string_view method) {
  const auto* m = find_forwarded(method);
  return m ? m->key_param : std::string_view();
}

bool relay_from(std::string_view peer, const shard_route& route) {
  return route.at == shard_route::where::remote && route.node == peer;
}

forward_verdict decide_forward(std::string_view method, bool from_node_link, const std::optional<std::string>& store_key,
                               const shard_route& route) {
  forward_verdict v;
  if (forwarded_key_param(method).empty() || from_node_link || !store_key) return v;
  switch (route.at) {
    case shard_route::where::local: return v;
    case shard_route::where::remote:
      v.what = forward_verdict::kind::forward;
      v.node = route.node;
      v.address = route.address;
      return v;
    case shard_route::where::unknown:
      v.what = forward_verdict::kind::refuse;
      v.error = forward_unavailable("session " + *store_key + " cannot be served now: " + route.why, "owner_unknown", {},
                                    route.shard);
      return v;
  }
  return v;
}

frame_error forward_unavailable(std::string message, std::string_view reason, const std::string& node,
                                const std::string& shard) {
  frame_error e;
  e.code = "UNAVAILABLE";
  e.message = std::move(message);
  e.retryable = true;
  e.retry_after_ms = kForwardRetryAfterMs;
  boost::json::object d{{"reason", reason}};
  if (!node.empty()) d["node"] = node;
  if (!shard.empty()) d["shard"] = shard;
  e.details = std::move(d);
  return e;
}

client_identity node_link_identity(const std::string& token, const std::string& self_node_id, const std::string& version) {
  client_identity who;
  who.token = token;
  who.client_id = "gateway-client";
  who.mode = "backend";
  who.version = version;
  who.display_name = std::string(kLinkName) + self_node_id;
  who.instance_id = self_node_id;
  // Every forwarded method: sessions.reset needs admin (the calling client's own scope was
  // checked on its node before the call was forwarded).
  who.scopes = {"operator.admin"};
  return who;
}

bool is_node_link(const client_info& who) {
  return who.id == "gateway-client" && who.mode == "backend" && who.display_name.rfind(kLinkName, 0) == 0;
}

std::optional<host_port> parse_address(std::string_view address) {
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= address.size()) return std::nullopt;
  std::string_view host = address.substr(0, colon), port = address.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return std::nullopt;
    host = host.substr(1, host.size() - 2);
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) return std::nullopt;
  host_port hp{std::string(host), static_cast<std::uint16_t>(value)};
  // A wildcard bind is reached on loopback from this host; another host needs a real address.
  if (hp.host == "0.0.0.0") hp.host = "127.0.0.1";
  if (hp.host == "::") hp.host = "::1";
  return hp;
}

}  // namespace sessionrt::gateway
