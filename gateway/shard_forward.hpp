// shard_forward: the gateway's side of "any node serves any client" (issue #36). Frame dispatch
// asks divert() before a request runs; a call whose session's shard another node owns (a row of
// forward_rule.hpp's forwarded_methods()) is sent over a pooled node_link to that node's gateway
// and answered to the caller as if this node had served it, its `chat` events included (to the
// caller and to this node's connections watching the session).
// Events of sessions another node holds (docs/cluster.md, "Events of other nodes' sessions"):
//   - sessions.changed: while a client of this node is subscribed (sessions.subscribe), the link
//     to every member keeps sessions.subscribe on it; each event a peer sends is passed on to
//     this node's subscribers when this node's view says the peer owns the session
//     (forward_rule.hpp's relay_from), so it comes once, in the peer's order.
//   - session.message: sessions.messages.subscribe for a session another node owns is forwarded
//     (the peer pushes to the link), and the link's events go to this node's subscribers of the
//     key. Every event_sync period the subscriptions follow the owners: a key whose shard moved
//     to another peer is subscribed there, one whose shard moved here is handed to this node's
//     own session_messages with its mark at the last message relayed, so what the old owner
//     pushed is not pushed again.
// sessions.list: this node's answer merged with every other member's (each lists the shards it
// holds; session_list_merge.hpp). A keyless sessions.create gets its key drawn here, preferring
// one of this node's shards (a fork: one of its parent's owner).
// Files: shard_forward.cpp (routing, forwarding, sessions.list), shard_forward_hold.cpp (the hold),
// shard_forward_events.cpp (the relay of other nodes' events).
// Contract:
//   - owner_of (from the cluster layer, which the gateway does not include) maps a store key to
//     its shard's owner; it must be cheap and thread-safe (a lookup in a snapshot).
//   - divert() runs on the loop thread and never blocks: false means "serve it here"; true means
//     `reply` is called exactly once, on another thread or before divert returns.
//   - One link per peer node, made on first use and kept; a peer seen at a new address (it
//     restarted) gets a new link, the old one ends.
//   - Node-to-node auth is the cluster's shared gateway token: every node of a cluster must run
//     with the same one (gateway.auth.token or $SESSIONRT_GATEWAY_TOKEN); a peer that refuses it
//     makes each forwarded call fail UNAVAILABLE naming the token mismatch.
//   - stop() (before the transport goes) ends every link; calls still waiting are answered.
// The hold (docs/cluster.md, "Calls held during a handoff"): a session-keyed call (not
// sessions.messages.subscribe) whose shard nobody serves now is held instead of answered
// UNAVAILABLE: its owner is unknown (owner_unknown), the owner is this node but the runtime does
// not serve the shard (opening not begun, or closing: not_owner), or the node it was forwarded to
// answered not_owner / could not be reached (node_unreachable: nothing was sent). Held calls wait
// per session key in arrival order (hold_queue.hpp); every hold_tick (and at once after a held
// call was answered) each key's head is decided again and sent on, one at a time per key, so the
// calls of a session reach its new owner in the order they came. A call of a key with held calls
// is held behind them even when the owner is known. Past gateway.cluster.holdMs a held call is
// answered with the refusal it had (UNAVAILABLE retryable, as before the hold); past max_held
// calls on the node a call is answered UNAVAILABLE reason hold_full; a closed connection's held
// calls are dropped. Not covered: calls of one key already on their way when the first refusal
// comes back are held in arrival order among themselves, but one sent on later may have passed
// them; a call served here that the runtime refuses between the check and the handler (a close
// that begins in between) is answered not_owner as before.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/connection_state.hpp"
#include "gateway/forward_rule.hpp"
#include "gateway/gateway_core.hpp"
#include "gateway/hold_queue.hpp"
#include "gateway/method_table.hpp"
#include "gateway/session_keys.hpp"

namespace sessionrt::gateway {

class node_link;

struct forward_options {
  std::string node_id;  // this node
  std::string token;    // the cluster's shared gateway token
  std::function<shard_route(const std::string& store_key)> owner_of;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds send_timeout{10000};   // chat.send is answered at once: started
  std::chrono::milliseconds call_timeout{30000};   // the other forwarded methods
  // The cluster's members and their gateways' addresses (this node may be among them); events
  // of other nodes' sessions are subscribed on each. Null: only on nodes calls went to.
  std::function<std::map<std::string, std::string>()> members;
  std::chrono::milliseconds event_sync{1000};       // how often subscriptions follow the owners
  // The hold: null = gateway.cluster.holdMs (0: calls are not held).
  std::optional<std::chrono::milliseconds> hold;
  std::size_t max_held = 1024;                      // calls held on this node at once
  std::chrono::milliseconds hold_tick{100};         // how often held calls' owners are looked up
};

class shard_forward {
 public:
  using reply_fn = std::function<void(method_outcome)>;
  shard_forward(gateway_core& core, forward_options options);
  ~shard_forward();
  shard_forward(const shard_forward&) = delete;
  shard_forward& operator=(const shard_forward&) = delete;

  // `params` may gain the key a keyless call is routed by (sessions.create: the key drawn here,
  // so the node serving it makes that one).
  bool divert(std::uint64_t conn, const client_info& who, std::string_view method, boost::json::object& params,
              reply_fn reply);
  // The connection closed (loop thread): its subscriptions end.
  void closed(std::uint64_t conn);
  void stop();

  // Prometheus lines: sessionrt_cluster_forwarded_total{method}, _forward_refused_total,
  // _forward_failures_total, _forward_links, _forward_connects_total, _relayed_events_total,
  // _relay_dropped_total, _held_calls, _held_total, _held_timeouts_total, _held_full_total.
  std::string metrics_text() const;

 private:
  // A session key some connection of this node subscribed to with sessions.messages.subscribe.
  struct message_watch {
    std::set<std::uint64_t> conns;
    std::string agent_id;
    std::string peer;  // the node whose link carries its messages; empty: served here
    std::string last_session_id, last_message_id;  // of the last message relayed
  };
  node_link* link_for(const std::string& node, const host_port& where);
  std::optional<resolved_key> routing_key(const forwarded_method& m, boost::json::object& params);
  std::string draw_session_key(const boost::json::object& params);
  bool list_everywhere(std::uint64_t conn, const boost::json::object& params, reply_fn& reply);
  void note_subscriptions(std::uint64_t conn, std::string_view method, const boost::json::object& params);
  void relayed(const std::string& peer, const std::string& name, boost::json::value payload);
  void arm_sync();
  void sync();
  void take_over(const std::string& key, const message_watch& w, int attempt);
  // The hold (hold_queue.hpp): a call waiting for its session's owner.
  struct held_call {
    std::uint64_t conn = 0, seq = 0;
    std::string method, key, agent_id;
    boost::json::object params;
    reply_fn reply;
    hold_queue::time_point arrived;
    frame_error last;  // the refusal it had: its answer past the deadline
  };
  bool holds_method(std::string_view method) const;
  reply_fn held_on_refusal(std::shared_ptr<held_call> c);
  void hold(std::shared_ptr<held_call> c, frame_error why);
  void arm_hold(std::chrono::milliseconds delay, bool rearm);
  void hold_tick(bool rearm);
  void deliver(hold_queue::entry e, std::shared_ptr<held_call> c);
  void delivered(hold_queue::entry e, std::shared_ptr<held_call> c, method_outcome out);

  gateway_core& core_;
  forward_options opt_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<node_link>> links_;  // by node id
  std::vector<std::unique_ptr<node_link>> retired_;           // peers seen at a new address
  std::map<std::string, std::uint64_t> forwarded_;            // by method
  std::atomic<std::uint64_t> refused_{0}, relayed_{0}, relay_dropped_{0};
  std::set<std::uint64_t> session_subscribers_;            // sessions.subscribe, not node links
  std::map<std::string, message_watch> message_watches_;   // by store key
  bool sync_armed_ = false;
  bool stopped_ = false;
  std::chrono::milliseconds hold_for_{0};
  mutable std::mutex hold_mu_;  // after mu_ when both are taken
  hold_queue holds_;
  std::map<std::uint64_t, std::shared_ptr<held_call>> held_calls_;  // waiting ones, by hold id
  std::uint64_t next_hold_id_ = 0;
  bool hold_armed_ = false;
  std::atomic<std::uint64_t> held_total_{0}, held_timeouts_{0}, held_full_{0};
};

}  // namespace sessionrt::gateway
