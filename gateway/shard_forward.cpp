#include "gateway/shard_forward.hpp"

#include <fmt/format.h>

#include "gateway/node_link.hpp"
#include "gateway/session_keys.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {

shard_forward::shard_forward(gateway_core& core, forward_options options) : core_(core), opt_(std::move(options)) {}

shard_forward::~shard_forward() { stop(); }

bool shard_forward::divert(std::uint64_t conn, const client_info& who, std::string_view method,
                           const boost::json::object& params, reply_fn reply) {
  const auto field = forwarded_key_param(method);
  if (field.empty() || is_node_link(who) || !opt_.owner_of) return false;
  const auto raw = json::get_string(params, field);
  if (!raw) return false;
  auto key = resolve_session_key(*core_.rt, std::string(*raw), std::string(json::get_string(params, "agentId").value_or("")));
  const std::optional<std::string> store_key = key.ok() ? std::optional<std::string>(key->key) : std::nullopt;
  const shard_route route = store_key ? opt_.owner_of(*store_key) : shard_route{};
  forward_verdict v = decide_forward(method, false, store_key, route);
  switch (v.what) {
    case forward_verdict::kind::serve_here: return false;
    case forward_verdict::kind::refuse:
      refused_.fetch_add(1);
      reply(std::move(v.error));
      return true;
    case forward_verdict::kind::forward: break;
  }
  const auto where = parse_address(v.address);
  if (!where) {
    refused_.fetch_add(1);
    reply(forward_unavailable(fmt::format("node {} owns shard {} but its address \"{}\" is not host:port", v.node,
                                          route.shard, v.address),
                              "node_unreachable", v.node, route.shard));
    return true;
  }
  node_link* link = link_for(v.node, *where);
  if (!link) {
    reply(forward_unavailable("this node is stopping", "link_lost", v.node, route.shard));
    return true;
  }
  {
    std::lock_guard lock(mu_);
    ++forwarded_[std::string(method)];
  }
  link_call call;
  call.method = std::string(method);
  call.params = params;
  call.timeout = method == "chat.send" ? opt_.send_timeout : opt_.call_timeout;
  call.origin = conn;
  call.session_key = *store_key;
  call.reply = std::move(reply);
  link->submit(std::move(call));
  return true;
}

node_link* shard_forward::link_for(const std::string& node, const host_port& where) {
  std::lock_guard lock(mu_);
  if (stopped_) return nullptr;
  auto& slot = links_[node];
  if (slot && (slot->options().where.host != where.host || slot->options().where.port != where.port)) {
    slot->request_stop();  // joined at stop(): never block the loop on it
    retired_.push_back(std::move(slot));
  }
  if (!slot) {
    node_link_options o;
    o.node_id = node;
    o.where = where;
    o.who = node_link_identity(opt_.token, opt_.node_id, core_.server_version);
    o.connect_timeout = opt_.connect_timeout;
    gateway_core* core = &core_;
    slot = std::make_unique<node_link>(std::move(o), [core](std::uint64_t origin, const std::string& key, boost::json::value p) {
      core->sink->to_session(origin, key, "chat", std::move(p));
    });
  }
  return slot.get();
}

void shard_forward::stop() {
  std::map<std::string, std::unique_ptr<node_link>> links;
  std::vector<std::unique_ptr<node_link>> retired;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    links.swap(links_);
    retired.swap(retired_);
  }
  for (auto& [id, l] : links) l->request_stop();
  for (auto& l : retired) l->request_stop();
  for (auto& [id, l] : links) l->join();
  for (auto& l : retired) l->join();
}

std::string shard_forward::metrics_text() const {
  std::lock_guard lock(mu_);
  std::uint64_t connects = 0, failures = 0;
  for (const auto& [id, l] : links_) {
    connects += l->connects();
    failures += l->failures();
  }
  std::string out;
  out += "# HELP sessionrt_cluster_forwarded_total Calls forwarded to the node owning their session's shard.\n";
  out += "# TYPE sessionrt_cluster_forwarded_total counter\n";
  for (const auto& [method, n] : forwarded_)
    out += fmt::format("sessionrt_cluster_forwarded_total{{method=\"{}\"}} {}\n", method, n);
  out += "# HELP sessionrt_cluster_forward_refused_total Calls answered UNAVAILABLE because no node serves their shard now.\n";
  out += "# TYPE sessionrt_cluster_forward_refused_total counter\n";
  out += fmt::format("sessionrt_cluster_forward_refused_total {}\n", refused_.load());
  out += "# HELP sessionrt_cluster_forward_failures_total Forwarded calls answered UNAVAILABLE (peer unreachable, timeout, link lost).\n";
  out += "# TYPE sessionrt_cluster_forward_failures_total counter\n";
  out += fmt::format("sessionrt_cluster_forward_failures_total {}\n", failures);
  out += "# HELP sessionrt_cluster_forward_links Open-or-opening links to other nodes.\n";
  out += "# TYPE sessionrt_cluster_forward_links gauge\n";
  out += fmt::format("sessionrt_cluster_forward_links {}\n", links_.size());
  out += "# HELP sessionrt_cluster_forward_connects_total Connections made to other nodes' gateways.\n";
  out += "# TYPE sessionrt_cluster_forward_connects_total counter\n";
  out += fmt::format("sessionrt_cluster_forward_connects_total {}\n", connects);
  return out;
}

}  // namespace sessionrt::gateway
