// shard_forward: the gateway's side of "any node serves any client" (issue #36). Frame dispatch
// asks divert() before a request runs; a call whose session's shard another node owns
// (forward_rule.hpp: chat.send, chat.abort, chat.history, sessions.patch, sessions.reset) is
// sent over a pooled node_link to that node's gateway and answered to the caller as if this
// node had served it, its `chat` events included (to the caller and to this node's connections
// watching the session).
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
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/connection_state.hpp"
#include "gateway/forward_rule.hpp"
#include "gateway/gateway_core.hpp"
#include "gateway/method_table.hpp"

namespace sessionrt::gateway {

class node_link;

struct forward_options {
  std::string node_id;  // this node
  std::string token;    // the cluster's shared gateway token
  std::function<shard_route(const std::string& store_key)> owner_of;
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds send_timeout{10000};   // chat.send is answered at once: started
  std::chrono::milliseconds call_timeout{30000};   // the other forwarded methods
};

class shard_forward {
 public:
  using reply_fn = std::function<void(method_outcome)>;
  shard_forward(gateway_core& core, forward_options options);
  ~shard_forward();
  shard_forward(const shard_forward&) = delete;
  shard_forward& operator=(const shard_forward&) = delete;

  bool divert(std::uint64_t conn, const client_info& who, std::string_view method, const boost::json::object& params,
              reply_fn reply);
  void stop();

  // Prometheus lines: sessionrt_cluster_forwarded_total{method}, _forward_refused_total,
  // _forward_failures_total, _forward_links, _forward_connects_total.
  std::string metrics_text() const;

 private:
  node_link* link_for(const std::string& node, const host_port& where);

  gateway_core& core_;
  forward_options opt_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<node_link>> links_;  // by node id
  std::vector<std::unique_ptr<node_link>> retired_;           // peers seen at a new address
  std::map<std::string, std::uint64_t> forwarded_;            // by method
  std::atomic<std::uint64_t> refused_{0};
  bool stopped_ = false;
};

}  // namespace sessionrt::gateway
