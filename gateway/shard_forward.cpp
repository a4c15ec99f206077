#include "gateway/shard_forward.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <limits>

#include "actors/router/route_resolver.hpp"
#include "gateway/node_link.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_list_merge.hpp"
#include "gateway/session_messages.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/lifecycle_event.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {
std::chrono::milliseconds hold_for(const gateway_core& core, const forward_options& o) {
  if (o.hold) return *o.hold;
  return std::chrono::milliseconds(core.rt ? core.rt->settings().gateway.cluster_hold_ms : 0);
}
}  // namespace

shard_forward::shard_forward(gateway_core& core, forward_options options)
    : core_(core),
      opt_(std::move(options)),
      hold_for_(hold_for(core_, opt_)),
      holds_(hold_limits{hold_for_, opt_.max_held}) {}

shard_forward::~shard_forward() { stop(); }

namespace {

constexpr std::size_t kMaxDraws = 16;  // keys drawn for a keyless sessions.create (see draw_session_key)

std::string agent_param(const bj::object& params) { return std::string(json::get_string(params, "agentId").value_or("")); }


}  // namespace

// The key a call is routed by, in the store's form; nullopt: nothing to route by (it runs here).
std::optional<resolved_key> shard_forward::routing_key(const forwarded_method& m, bj::object& params) {
  std::string raw(json::get_string(params, m.key_param).value_or(""));
  const auto& routing = core_.rt->settings().routing;
  if (raw.empty() && !params.contains(m.key_param)) {
    switch (m.without_key) {
      case forwarded_method::keyless::runs_here: return std::nullopt;
      case forwarded_method::keyless::main_session:
        // chat.startup: a shortId or slugHint is looked up where the call runs (here).
        if (params.contains("shortId") || params.contains("slugHint")) return std::nullopt;
        raw = "agent:" + (agent_param(params).empty() ? actors::default_agent_of(routing) : agent_param(params)) + ":" +
              routing.session.main_key;
        break;
      case forwarded_method::keyless::new_key:
        raw = draw_session_key(params);
        params[m.key_param] = raw;
        break;
    }
  }
  auto key = resolve_session_key(*core_.rt, raw, agent_param(params));
  if (!key.ok()) return std::nullopt;
  return *key;
}

// A new dashboard key as sessions.create makes one, drawn so that its shard is this node's when
// one of a few draws is (no hop for most creates). A fork must be written by the node that holds
// its parent (runtime::fork_session reads the parent's transcript): the key is drawn among those
// whose owner is the parent's. After kMaxDraws the first draw is kept, and forwarded if need be.
std::string shard_forward::draw_session_key(const bj::object& params) {
  const auto& routing = core_.rt->settings().routing;
  const std::string agent = agent_param(params).empty() ? actors::default_agent_of(routing) : agent_param(params);
  std::optional<shard_route> parent;
  if (json::get_bool(params, "fork").value_or(false))
    if (auto p = json::get_string(params, "parentSessionKey"))
      if (auto pk = resolve_session_key(*core_.rt, std::string(*p), agent); pk.ok()) parent = opt_.owner_of(pk->key);
  std::string first;
  for (std::size_t i = 0; i < kMaxDraws; ++i) {
    std::string key = "agent:" + agent + ":dashboard:" + new_uuid_v4();
    const shard_route r = opt_.owner_of(key);
    const bool fits = parent ? (r.at == parent->at && r.node == parent->node) : r.at == shard_route::where::local;
    if (fits) return key;
    if (first.empty()) first = std::move(key);
  }
  return first;
}

// What this node's clients subscribed to, seen as their calls pass (node links excluded: what
// they subscribe to is this node's own sessions, which reach them directly).
void shard_forward::note_subscriptions(std::uint64_t conn, std::string_view method, const bj::object& params) {
  const bool sessions_sub = method == "sessions.subscribe", sessions_unsub = method == "sessions.unsubscribe";
  const bool messages_unsub = method == "sessions.messages.unsubscribe";
  if (!sessions_sub && !sessions_unsub && !messages_unsub) return;
  std::optional<std::string> key;
  if (messages_unsub)
    if (auto raw = json::get_string(params, "key"))
      if (auto k = resolve_session_key(*core_.rt, std::string(*raw), agent_param(params)); k.ok()) key = k->key;
  {
    std::lock_guard lock(mu_);
    if (sessions_sub) session_subscribers_.insert(conn);
    if (sessions_unsub) session_subscribers_.erase(conn);
    if (key)
      if (auto it = message_watches_.find(*key); it != message_watches_.end()) it->second.conns.erase(conn);
  }
  if (sessions_sub) arm_sync();
}

// sessions.list: this node's rows and every other member's (each answers for the shards it
// holds, over its link), merged (session_list_merge.hpp). false: no other member, or a limit /
// offset the local handler refuses (it answers with its error).
bool shard_forward::list_everywhere(std::uint64_t conn, const bj::object& params, reply_fn& reply) {
  std::vector<std::pair<std::string, host_port>> peers;
  if (opt_.members)
    for (const auto& [id, address] : opt_.members())
      if (id != opt_.node_id)
        if (auto where = parse_address(address)) peers.emplace_back(id, *where);
  if (peers.empty()) return false;
  const bj::value* limit_v = params.if_contains("limit");
  const bj::value* offset_v = params.if_contains("offset");
  if ((limit_v && !(limit_v->is_int64() && limit_v->as_int64() > 0)) || (offset_v && !(offset_v->is_int64() && offset_v->as_int64() >= 0)))
    return false;
  const std::int64_t limit = limit_v ? limit_v->as_int64() : 100, offset = offset_v ? offset_v->as_int64() : 0;
  bj::object wide = params;
  wide["offset"] = 0;
  wide["limit"] = offset + limit;  // the first offset + limit rows of each node hold the page
  struct gather {
    std::mutex mu;
    std::size_t left = 0;
    std::vector<bj::object> answers;  // [0]: this node's
    std::optional<frame_error> error;
    reply_fn reply;
  };
  auto g = std::make_shared<gather>();
  g->left = peers.size() + 1;
  g->answers.resize(peers.size() + 1);
  g->reply = std::move(reply);
  auto done = [g, offset, limit](std::size_t slot, method_outcome out) {
    std::unique_lock lock(g->mu);
    if (auto* e = std::get_if<frame_error>(&out)) {
      if (!g->error || slot == 0) g->error = std::move(*e);  // this node's own refusal first
    } else if (auto* v = std::get_if<bj::value>(&out); v && v->is_object()) {
      g->answers[slot] = std::move(v->as_object());
    }
    if (--g->left > 0) return;
    lock.unlock();
    if (g->error) g->reply(std::move(*g->error));
    else g->reply(bj::value(merge_session_lists(std::move(g->answers), offset, limit)));
  };
  {
    std::lock_guard lock(mu_);
    ++forwarded_["sessions.list"];
  }
  for (std::size_t i = 0; i < peers.size(); ++i) {
    node_link* link = link_for(peers[i].first, peers[i].second);
    if (!link) {
      done(i + 1, forward_unavailable("this node is stopping", "link_lost", peers[i].first));
      continue;
    }
    link_call call;
    call.method = "sessions.list";
    call.params = wide;
    call.timeout = opt_.call_timeout;
    call.origin = conn;
    call.reply = [done, slot = i + 1](method_outcome out) { done(slot, std::move(out)); };
    link->submit(std::move(call));
  }
  core_.sink->run_later([this, conn, wide = std::move(wide), done] {
    method_outcome out;
    if (const method_entry* m = find_method("sessions.list")) {
      method_call call{wide, core_, conn, nullptr};
      out = m->handler(call);
    }
    done(0, std::move(out));
  });
  return true;
}

bool shard_forward::divert(std::uint64_t conn, const client_info& who, std::string_view method, bj::object& params,
                           reply_fn reply) {
  if (!opt_.owner_of || is_node_link(who)) return false;
  note_subscriptions(conn, method, params);
  if (method == "sessions.list") return list_everywhere(conn, params, reply);
  const forwarded_method* m = find_forwarded(method);
  if (!m) return false;
  const std::optional<resolved_key> resolved = routing_key(*m, params);
  if (!resolved) return false;
  const std::optional<std::string> store_key = resolved->key;
  const shard_route route = opt_.owner_of(*store_key);
  forward_verdict v = decide_forward(method, false, store_key, route);
  if (method == "sessions.messages.subscribe" && v.what != forward_verdict::kind::refuse) {
    // Followed from now on wherever its shard goes (sync()).
    {
      std::lock_guard lock(mu_);
      message_watch& w = message_watches_[*store_key];
      w.conns.insert(conn);
      w.agent_id = resolved->agent_id;
      if (v.what == forward_verdict::kind::forward) w.peer = v.node;
    }
    arm_sync();
  }
  std::shared_ptr<held_call> held;
  if (holds_method(method)) {
    held = std::make_shared<held_call>();
    held->conn = conn;
    held->method = std::string(method);
    held->key = *store_key;
    held->agent_id = resolved->agent_id;
    held->arrived = std::chrono::steady_clock::now();
    std::optional<frame_error> why;
    {
      std::lock_guard lock(hold_mu_);
      held->seq = holds_.arrive();
      if (holds_.busy(*store_key))
        why = forward_unavailable("calls of session " + *store_key + " are held until its shard is served", "held", {},
                                  route.shard);
    }
    if (!why && v.what == forward_verdict::kind::refuse) why = v.error;
    if (!why && v.what == forward_verdict::kind::serve_here)
      if (status served = core_.rt->serves(*store_key, resolved->agent_id); !served.ok()) why = from_status(served);
    if (why) {
      held->params = params;
      held->reply = std::move(reply);
      hold(std::move(held), std::move(*why));
      return true;
    }
  }
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
  if (held) {
    held->params = params;
    held->reply = std::move(reply);
    call.reply = held_on_refusal(std::move(held));
  } else {
    call.reply = std::move(reply);
  }
  link->submit(std::move(call));
  return true;
}

// ---- the hold ------------------------------------------------------------------------------

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
    slot = std::make_unique<node_link>(
        std::move(o),
        [core](std::uint64_t origin, const std::string& key, boost::json::value p) {
          core->sink->to_session(origin, key, "chat", std::move(p));
        },
        [this, node](const std::string& name, boost::json::value p) { relayed(node, name, std::move(p)); });
  }
  return slot.get();
}

void shard_forward::closed(std::uint64_t conn) {
  {
    std::lock_guard lock(mu_);
    session_subscribers_.erase(conn);
    for (auto& [key, w] : message_watches_) w.conns.erase(conn);  // emptied watches go at the next sync
  }
  std::lock_guard lock(hold_mu_);  // its held calls: nobody to answer
  for (const auto& e : holds_.drop_conn(conn)) held_calls_.erase(e.id);
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
  // Held calls are answered with the refusal they had (the caller retries, as before the hold).
  std::map<std::uint64_t, std::shared_ptr<held_call>> held;
  {
    std::lock_guard lock(hold_mu_);
    held.swap(held_calls_);
    for (const auto& [id, c] : held) holds_.drop_conn(c->conn);
  }
  for (auto& [id, c] : held) c->reply(std::move(c->last));
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
  out += "# HELP sessionrt_cluster_relayed_events_total Events of other nodes' sessions passed on to this node's subscribers.\n";
  out += "# TYPE sessionrt_cluster_relayed_events_total counter\n";
  out += fmt::format("sessionrt_cluster_relayed_events_total {}\n", relayed_.load());
  out += "# HELP sessionrt_cluster_relay_dropped_total Events of other nodes not passed on (not from the session's owner, or nobody here subscribed).\n";
  out += "# TYPE sessionrt_cluster_relay_dropped_total counter\n";
  out += fmt::format("sessionrt_cluster_relay_dropped_total {}\n", relay_dropped_.load());
  std::size_t held_now = 0;
  {
    std::lock_guard hold_lock(hold_mu_);
    held_now = holds_.held();
  }
  out += "# HELP sessionrt_cluster_held_calls Calls held now for sessions whose shard nobody serves (handoff, failover).\n";
  out += "# TYPE sessionrt_cluster_held_calls gauge\n";
  out += fmt::format("sessionrt_cluster_held_calls {}\n", held_now);
  out += "# HELP sessionrt_cluster_held_total Calls held (each time one waited for its shard's owner).\n";
  out += "# TYPE sessionrt_cluster_held_total counter\n";
  out += fmt::format("sessionrt_cluster_held_total {}\n", held_total_.load());
  out += "# HELP sessionrt_cluster_held_timeouts_total Held calls answered UNAVAILABLE past gateway.cluster.holdMs.\n";
  out += "# TYPE sessionrt_cluster_held_timeouts_total counter\n";
  out += fmt::format("sessionrt_cluster_held_timeouts_total {}\n", held_timeouts_.load());
  out += "# HELP sessionrt_cluster_held_full_total Calls answered UNAVAILABLE because the node held its bound of calls.\n";
  out += "# TYPE sessionrt_cluster_held_full_total counter\n";
  out += fmt::format("sessionrt_cluster_held_full_total {}\n", held_full_.load());
  return out;
}

}  // namespace sessionrt::gateway
