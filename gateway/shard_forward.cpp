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
constexpr std::size_t kHistoryPage = 200;  // as session_messages reads a session's new messages
constexpr int kTakeOverTries = 60;         // event_sync apart: a shard's open may take a while

std::string agent_param(const bj::object& params) { return std::string(json::get_string(params, "agentId").value_or("")); }

// A refusal that means "nobody serves the shard now, and nothing was done": the call is held
// (owner_unknown, not_owner) or sent nowhere (node_unreachable: the connect failed).
bool holdable_refusal(const method_outcome& out) {
  const auto* e = std::get_if<frame_error>(&out);
  if (!e || !e->retryable || !e->details.is_object()) return false;
  const auto reason = json::get_string(e->details.as_object(), "reason").value_or("");
  return reason == "not_owner" || reason == "owner_unknown" || reason == "node_unreachable";
}

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

bool shard_forward::holds_method(std::string_view method) const {
  if (hold_for_.count() <= 0 || !core_.sink || method == "sessions.messages.subscribe") return false;
  const method_entry* m = find_method(method);
  // A held call served here runs without its connection's state (the connection may be gone):
  // chat.send, the one forwarded method that runs on the loop, does not use it.
  return m && (!m->on_loop || method == "chat.send");
}

// A forwarded call's answer: a refusal that sent nothing makes it held, anything else goes to
// the caller.
shard_forward::reply_fn shard_forward::held_on_refusal(std::shared_ptr<held_call> c) {
  return [this, c = std::move(c)](method_outcome out) mutable {
    if (holdable_refusal(out)) {
      hold(std::move(c), std::move(std::get<frame_error>(out)));
      return;
    }
    c->reply(std::move(out));
  };
}

void shard_forward::hold(std::shared_ptr<held_call> c, frame_error why) {
  bool arm = false;
  {
    std::lock_guard lock(hold_mu_);
    if (!stopped_) {
      const std::uint64_t id = ++next_hold_id_;
      if (holds_.hold(c->key, id, c->seq, c->conn, c->arrived) == hold_queue::admit::held) {
        spdlog::info("gateway: forwarding: holding {} for {} until its shard is served: {}", c->method, c->key, why.message);
        c->last = std::move(why);
        held_calls_.emplace(id, std::move(c));
        held_total_.fetch_add(1);
        arm = !hold_armed_;
        hold_armed_ = true;
      } else {
        held_full_.fetch_add(1);
        why = forward_unavailable(fmt::format("{} calls are held on this node for shards nobody serves now (the bound); "
                                              "retry: {}", opt_.max_held, why.message),
                                  "hold_full");
      }
    }
  }
  if (c) {
    refused_.fetch_add(1);
    c->reply(std::move(why));
    return;
  }
  if (arm) arm_hold(opt_.hold_tick, true);
}

// `rearm`: the periodic tick (one armed at a time); otherwise a look at once, after a held call
// was answered.
void shard_forward::arm_hold(std::chrono::milliseconds delay, bool rearm) {
  core_.sink->after(delay, [this, rearm] { hold_tick(rearm); });
}

// On the loop thread: held calls past their deadline are answered; each idle key's head is sent
// on when its owner is known (and, when it is this node, the runtime serves the shard).
void shard_forward::hold_tick(bool rearm) {
  std::vector<std::shared_ptr<held_call>> timed_out;
  std::vector<std::pair<hold_queue::entry, std::shared_ptr<held_call>>> go;
  {
    std::lock_guard lock(hold_mu_);
    if (rearm) hold_armed_ = false;
    if (stopped_) return;
    for (auto& e : holds_.expired(std::chrono::steady_clock::now())) {
      auto it = held_calls_.find(e.id);
      if (it == held_calls_.end()) continue;
      timed_out.push_back(std::move(it->second));
      held_calls_.erase(it);
    }
    for (const auto& key : holds_.idle_keys()) {
      const shard_route r = opt_.owner_of(key);
      if (r.at == shard_route::where::unknown) continue;
      hold_queue::entry e;
      if (!holds_.take(key, e)) continue;
      auto it = held_calls_.find(e.id);
      if (it == held_calls_.end()) {  // cannot be: every waiting entry has its call
        holds_.finished(key);
        continue;
      }
      if (r.at == shard_route::where::local)
        if (status served = core_.rt->serves(key, it->second->agent_id); !served.ok()) {
          holds_.put_back(std::move(e));
          continue;
        }
      go.emplace_back(std::move(e), std::move(it->second));
      held_calls_.erase(it);
    }
    if (rearm && holds_.held() > 0) hold_armed_ = true;
    else rearm = false;
  }
  for (auto& c : timed_out) {
    held_timeouts_.fetch_add(1);
    refused_.fetch_add(1);
    spdlog::warn("gateway: forwarding: {} for {} held {} ms and still not served", c->method, c->key, hold_for_.count());
    frame_error e = std::move(c->last);
    e.message = fmt::format("held {} ms (gateway.cluster.holdMs) and still not served: {}", hold_for_.count(), e.message);
    c->reply(std::move(e));
  }
  for (auto& [e, c] : go) deliver(std::move(e), std::move(c));
  if (rearm) arm_hold(opt_.hold_tick, true);
}

// A held key's head, sent to its owner as divert would have: run here on a method worker, or
// forwarded; its answer comes to delivered().
void shard_forward::deliver(hold_queue::entry e, std::shared_ptr<held_call> c) {
  const shard_route route = opt_.owner_of(c->key);
  const forward_verdict v = decide_forward(c->method, false, c->key, route);
  auto done = [this, e, c](method_outcome out) { delivered(e, c, std::move(out)); };
  switch (v.what) {
    case forward_verdict::kind::refuse: done(v.error); return;
    case forward_verdict::kind::serve_here: {
      const method_entry* m = find_method(c->method);
      if (!m) {
        done(error_of("unknown method: " + c->method));
        return;
      }
      std::function<void()> job = [this, c, m, done] {
        method_outcome out;
        try {
          method_call call{c->params, core_, c->conn, nullptr};
          out = m->handler(call);
        } catch (const std::exception& ex) {
          out = error_of(std::string("internal error: ") + ex.what(), "UNAVAILABLE");
        }
        done(std::move(out));
      };
      // Where frame dispatch would run it: the loop (chat.send) or a method worker.
      if (m->on_loop) core_.sink->after(std::chrono::milliseconds(0), std::move(job));
      else core_.sink->run_later(std::move(job));
      return;
    }
    case forward_verdict::kind::forward: break;
  }
  const auto where = parse_address(v.address);
  node_link* link = where ? link_for(v.node, *where) : nullptr;
  if (!link) {
    done(forward_unavailable(fmt::format("node {} cannot be reached at \"{}\"", v.node, v.address), "node_unreachable",
                             v.node, route.shard));
    return;
  }
  {
    std::lock_guard lock(mu_);
    ++forwarded_[c->method];
  }
  link_call call;
  call.method = c->method;
  call.params = c->params;
  call.timeout = c->method == "chat.send" ? opt_.send_timeout : opt_.call_timeout;
  call.origin = c->conn;
  call.session_key = c->key;
  call.reply = std::move(done);
  link->submit(std::move(call));
}

// A delivered head's answer (any thread): refused again, it waits at its place; otherwise the
// caller has it, and the key's next call may go (looked at at once, on the loop).
void shard_forward::delivered(hold_queue::entry e, std::shared_ptr<held_call> c, method_outcome out) {
  if (holdable_refusal(out)) {
    bool answer_now = false;
    {
      std::lock_guard lock(hold_mu_);
      if (stopped_) {
        answer_now = true;
        holds_.finished(e.key);
      } else {
        c->last = std::get<frame_error>(out);
        held_calls_.emplace(e.id, c);
        holds_.put_back(std::move(e));
      }
    }
    if (answer_now) c->reply(std::move(out));
    return;
  }
  bool more = false;
  {
    std::lock_guard lock(hold_mu_);
    holds_.finished(e.key);
    more = holds_.busy(e.key) && !stopped_;
  }
  c->reply(std::move(out));
  if (more) arm_hold(std::chrono::milliseconds(0), false);
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

// On a link's thread, in the peer's order: its event, passed on when this node's view says the
// peer owns the session (forward_rule.hpp's relay_from).
void shard_forward::relayed(const std::string& peer, const std::string& name, bj::value payload) {
  if (!payload.is_object()) return;
  const auto& p = payload.as_object();
  const std::string key(json::get_string(p, "sessionKey").value_or(""));
  if (key.empty() || !relay_from(peer, opt_.owner_of(key))) {
    relay_dropped_.fetch_add(1);
    return;
  }
  std::vector<std::uint64_t> to;
  bool unwatched = false;
  {
    std::lock_guard lock(mu_);
    if (name == "sessions.changed") {
      to.assign(session_subscribers_.begin(), session_subscribers_.end());
    } else if (auto it = message_watches_.find(key); it != message_watches_.end() && !it->second.conns.empty()) {
      message_watch& w = it->second;
      to.assign(w.conns.begin(), w.conns.end());
      if (const auto* s = p.if_contains("session"); s && s->is_object())
        w.last_session_id = std::string(json::get_string(s->as_object(), "sessionId").value_or(w.last_session_id));
      w.last_message_id = std::string(json::get_string(p, "messageId").value_or(""));
    } else {
      unwatched = true;  // nobody here wants it any more: sync() unsubscribes
    }
  }
  if (name == "session.message" && core_.messages && core_.messages->watched(key)) {
    // This node pushed the session's messages while it held the shard: if the shard comes back
    // before sync() hands it over, its own push must not repeat what was relayed since.
    std::lock_guard lock(mu_);
    if (auto it = message_watches_.find(key); it != message_watches_.end() && !it->second.last_session_id.empty())
      core_.messages->set_last(key, {it->second.last_session_id, std::numeric_limits<std::uint64_t>::max()});
  }
  if (unwatched || to.empty()) {
    relay_dropped_.fetch_add(1);
    return;
  }
  relayed_.fetch_add(1);
  for (auto conn : to) core_.sink->event_to(conn, name, payload);
}

// On the loop thread: sync() every event_sync while anything is subscribed.
void shard_forward::arm_sync() {
  {
    std::lock_guard lock(mu_);
    if (sync_armed_ || stopped_ || !core_.sink) return;
    sync_armed_ = true;
  }
  core_.sink->after(opt_.event_sync, [this] { sync(); });
}

// The subscriptions follow the members and the owners (loop thread). Links are made and told
// outside the lock (link_for takes it).
void shard_forward::sync() {
  struct move {
    std::string key, from, to, to_address;  // from / to: a peer, or empty for this node
    message_watch watch;
  };
  std::vector<move> moves;
  bool want_sessions = false, again = false;
  {
    std::lock_guard lock(mu_);
    sync_armed_ = false;
    if (stopped_) return;
    want_sessions = !session_subscribers_.empty();
    for (auto it = message_watches_.begin(); it != message_watches_.end();) {
      message_watch& w = it->second;
      if (w.conns.empty()) {
        if (!w.peer.empty()) moves.push_back({it->first, w.peer, {}, {}, {}});
        it = message_watches_.erase(it);
        continue;
      }
      const shard_route r = opt_.owner_of(it->first);
      if (r.at == shard_route::where::remote && r.node != w.peer) {
        moves.push_back({it->first, w.peer, r.node, r.address, w});
        w.peer = r.node;
      } else if (r.at == shard_route::where::local && !w.peer.empty()) {
        moves.push_back({it->first, w.peer, {}, {}, w});
        w.peer.clear();
      }
      ++it;
    }
    again = want_sessions || !message_watches_.empty();
  }
  // sessions.changed: every member's link subscribed while a client here is.
  std::map<std::string, std::string> members = opt_.members ? opt_.members() : std::map<std::string, std::string>{};
  for (const auto& [id, address] : members) {
    if (id == opt_.node_id) continue;
    if (!want_sessions) {
      std::lock_guard lock(mu_);
      if (auto l = links_.find(id); l != links_.end() && l->second) l->second->want_sessions(false);
      continue;
    }
    if (auto where = parse_address(address))
      if (node_link* l = link_for(id, *where)) l->want_sessions(true);
  }
  for (auto& m : moves) {
    if (!m.from.empty()) {
      std::lock_guard lock(mu_);
      if (auto l = links_.find(m.from); l != links_.end() && l->second) l->second->want_messages(m.key, false);
    }
    if (!m.to.empty()) {
      if (auto where = parse_address(m.to_address))
        if (node_link* l = link_for(m.to, *where)) l->want_messages(m.key, true);
    } else if (!m.watch.conns.empty() && core_.messages) {
      core_.sink->run_later([this, key = m.key, w = m.watch] { take_over(key, w, 0); });
    }
  }
  if (again) arm_sync();
}

// On a method worker: a session whose shard came here. Its subscribers join this node's
// session_messages with the mark at the last message relayed (nothing relayed yet: at its newest
// message), then whatever is stored past the mark is pushed. The owner view says "here" as soon
// as this node holds the owner key, which may be before the shard is open: while the runtime
// refuses the key (not_owner), the hand-over waits and is tried again (kTakeOverTries times,
// one event_sync apart, while the shard is still this node's).
void shard_forward::take_over(const std::string& key, const message_watch& w, int attempt) {
  auto h = core_.rt->history(key, kHistoryPage);
  if (!h.ok() && h.error().code() == errc::not_owner) {
    if (attempt + 1 >= kTakeOverTries || opt_.owner_of(key).at != shard_route::where::local) return;
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
    }
    core_.sink->after(opt_.event_sync, [this, key, w, attempt] {
      core_.sink->run_later([this, key, w, attempt] { take_over(key, w, attempt + 1); });
    });
    return;
  }
  session_messages::mark m;
  if (h.ok()) {
    m.session_id = h->session_id;
    if (!h->offsets.empty()) m.offset = h->offsets.back();
    if (!w.last_session_id.empty() && w.last_session_id != h->session_id) {
      m.offset.reset();  // reset since the last message relayed: all of the new transcript is new
    } else if (!w.last_message_id.empty()) {
      for (std::size_t i = 0; i < h->ids.size() && i < h->offsets.size(); ++i)
        if (h->ids[i] == w.last_message_id) m.offset = h->offsets[i];
    }
  }
  for (auto conn : w.conns) core_.messages->subscribe(conn, key, m);
  core_.messages->set_last(key, m);
  lifecycle_event e;
  e.session_key = key;
  e.agent_id = w.agent_id;
  session_message_appended(core_, e);
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
