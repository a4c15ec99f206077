// shard_forward's relay of other nodes' session events (shard_forward.hpp): sessions.changed and
// session.message of sessions a peer holds, passed to this node's subscribers.
#include "gateway/shard_forward.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gateway/node_link.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_messages.hpp"
#include "messages/json_access.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {
constexpr std::size_t kHistoryPage = 200;  // as session_messages reads a session's new messages
constexpr int kTakeOverTries = 60;         // event_sync apart: a shard's open may take a while
}  // namespace

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

}  // namespace sessionrt::gateway
