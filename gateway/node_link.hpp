// node_link: this node's gateway as a client of another node's gateway (issue #36, "any node
// serves any client"): one WebSocket connection per peer node, over the same protocol-4
// gateway that OpenClaw's CLI speaks (gateway_client's handshake with the cluster's shared
// token), kept open and shared by every call forwarded to that node (shard_forward.hpp).
// - submit() (any thread) queues a call; the link's own thread connects on demand (bounded by
//   connect_timeout), sends it as a `req`, and hands the `res` to the call's reply: the payload,
//   or the peer's error as the client would have had it from the peer (code, message, details,
//   retryable, retryAfterMs).
// - Failures become UNAVAILABLE {retryable, retryAfterMs} (forward_rule.hpp): the peer cannot be
//   reached (node_unreachable), no answer within the call's timeout (node_timeout), the
//   connection lost while the call waited (link_lost). A chat.send may have started on the peer
//   before such a failure: the client's retry with the same idempotencyKey is answered by the
//   peer's own dedupe (status in_flight / ok), never run twice.
// - The peer's `chat` events come over the same connection (it sent the chat.send, and watches
//   the session): each goes to on_chat with the connection of this node that sent the run's
//   chat.send (0 for runs of others, which only this node's watchers of the session get).
//   When the connection is lost, each run still open gets a closing `error` event (its run may
//   still end on the peer; chat.history shows how).
// - Subscriptions (want_sessions, want_messages): the link keeps `sessions.subscribe` and
//   `sessions.messages.subscribe {key}` on the peer while wanted, sent again after each connect
//   (the link connects for them as for a call; a peer that cannot be reached is tried again at
//   the next want_* call). The peer's `sessions.changed` and `session.message` events go to
//   on_event. A forwarded sessions.messages.subscribe that succeeds counts as wanted and sent.
//   Events the peer sent while the link was down are not replayed.
// - Every reply, on_chat and on_event call comes from the link's thread, in the order the peer sent the
//   frames, so a run's `started` answer precedes its events when the caller posts both to one
//   queue. Each reply is called exactly once, stop() included.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <boost/json/value.hpp>

#include "gateway/client_protocol.hpp"
#include "gateway/forward_rule.hpp"
#include "gateway/method_table.hpp"

namespace sessionrt::gateway {

class gateway_client;

struct link_call {
  std::string method;
  boost::json::value params;
  std::chrono::milliseconds timeout{30000};
  std::uint64_t origin = 0;     // the calling connection on this node
  std::string session_key;      // the call's session, in the store's form
  std::function<void(method_outcome)> reply;
};

struct node_link_options {
  std::string node_id;  // the peer
  host_port where;
  client_identity who;  // node_link_identity(...)
  std::chrono::milliseconds connect_timeout{2000};
};

class node_link {
 public:
  using chat_fn = std::function<void(std::uint64_t origin, const std::string& session_key, boost::json::value payload)>;
  using event_fn = std::function<void(const std::string& name, boost::json::value payload)>;
  node_link(node_link_options options, chat_fn on_chat, event_fn on_event = nullptr);
  ~node_link();
  node_link(const node_link&) = delete;
  node_link& operator=(const node_link&) = delete;

  void submit(link_call call);
  // Any thread; idempotent. Each call also wakes the link, which connects if something is wanted.
  void want_sessions(bool on);
  void want_messages(const std::string& session_key, bool on);
  // Asks the thread to end: what waits is answered link_lost. join() waits for it.
  void request_stop();
  void join();

  const node_link_options& options() const { return opt_; }
  std::uint64_t connects() const { return connects_.load(); }
  std::uint64_t failures() const { return failures_.load(); }

 private:
  struct pending {
    link_call call;
    std::chrono::steady_clock::time_point deadline;
  };
  struct open_run {
    std::uint64_t origin = 0;
    std::string session_key, agent_id;
    std::int64_t seq = 0;
  };
  void run();
  bool connect(std::deque<link_call>& fresh);
  void send(link_call call);
  void drain();
  void on_frame(const std::string& text);
  void on_chat_event(boost::json::value payload);
  void expire();
  void broken(const std::string& why);
  void fail(link_call& call, const std::string& message, std::string_view reason);
  void wait_for_work();
  bool wants_events();
  void subscribe_wanted();
  void wake();

  node_link_options opt_;
  chat_fn on_chat_;
  event_fn on_event_;
  int wake_fd_ = -1;
  std::mutex mu_;
  std::deque<link_call> queue_;
  bool stopping_ = false;
  bool want_sessions_ = false;           // under mu_
  std::set<std::string> want_keys_;      // under mu_
  // The thread's own.
  std::unique_ptr<gateway_client> client_;
  std::uint64_t next_id_ = 1;
  std::map<std::string, pending> pending_;
  std::map<std::string, open_run> runs_;
  bool sent_sessions_ = false;        // on this connection
  std::set<std::string> sent_keys_;   // on this connection
  std::atomic<std::uint64_t> connects_{0}, failures_{0};
  std::thread thread_;
};

}  // namespace sessionrt::gateway
