#include "gateway/node_link.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "gateway/gateway_client.hpp"
#include "messages/json_access.hpp"
#include "messages/json_reader.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;
using steady = std::chrono::steady_clock;

namespace {

// The peer's error as its client would have had it; retryAfterMs is read from the frame itself
// (client_protocol's gateway_error does not keep it).
frame_error relayed_error(const server_frame& f, const std::string& text) {
  frame_error e;
  e.code = f.error.code;
  e.message = f.error.message;
  e.details = f.error.details;
  e.retryable = f.error.retryable;
  if (auto o = json::parse_object(text))
    if (const auto* err = o->if_contains("error"); err && err->is_object())
      if (auto after = json::get_int(err->as_object(), "retryAfterMs")) e.retry_after_ms = *after;
  return e;
}

std::string agent_of(const std::string& store_key) {
  if (store_key.rfind("agent:", 0) != 0) return "main";
  const auto end = store_key.find(':', 6);
  return end == std::string::npos ? "main" : store_key.substr(6, end - 6);
}

bool closes_run(std::string_view state) { return state == "final" || state == "aborted" || state == "error"; }

}  // namespace

node_link::node_link(node_link_options options, chat_fn on_chat, event_fn on_event)
    : opt_(std::move(options)), on_chat_(std::move(on_chat)), on_event_(std::move(on_event)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  thread_ = std::thread([this] { run(); });
}

node_link::~node_link() {
  request_stop();
  join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void node_link::submit(link_call call) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      queue_.push_back(std::move(call));
      call.reply = nullptr;
    }
  }
  if (call.reply) fail(call, "this node is stopping; node " + opt_.node_id + " was not asked", "link_lost");
  wake();
}

void node_link::want_sessions(bool on) {
  {
    std::lock_guard lock(mu_);
    want_sessions_ = on;
  }
  wake();
}

void node_link::want_messages(const std::string& session_key, bool on) {
  {
    std::lock_guard lock(mu_);
    if (on) want_keys_.insert(session_key);
    else want_keys_.erase(session_key);
  }
  wake();
}

void node_link::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

bool node_link::wants_events() {
  std::lock_guard lock(mu_);
  return want_sessions_ || !want_keys_.empty();
}

// On the link's thread, connected: what is wanted and not sent on this connection is sent, what
// was sent and is no longer wanted is unsubscribed. The answers are not waited for (a refusal
// is logged by the peer; the subscription is tried again after the next connect).
void node_link::subscribe_wanted() {
  bool sessions = false;
  std::set<std::string> keys;
  {
    std::lock_guard lock(mu_);
    sessions = want_sessions_;
    keys = want_keys_;
  }
  auto control = [&](std::string method, boost::json::object params) {
    link_call c;
    c.method = std::move(method);
    c.params = std::move(params);
    c.timeout = std::chrono::milliseconds(30000);
    send(std::move(c));
  };
  if (sessions != sent_sessions_) {
    control(sessions ? "sessions.subscribe" : "sessions.unsubscribe", {});
    sent_sessions_ = sessions;
  }
  for (const auto& k : keys)
    if (sent_keys_.insert(k).second) control("sessions.messages.subscribe", {{"key", k}});
  for (auto it = sent_keys_.begin(); it != sent_keys_.end();) {
    if (keys.count(*it)) {
      ++it;
      continue;
    }
    control("sessions.messages.unsubscribe", {{"key", *it}});
    it = sent_keys_.erase(it);
  }
}

void node_link::request_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void node_link::join() {
  if (thread_.joinable()) thread_.join();
}

void node_link::fail(link_call& call, const std::string& message, std::string_view reason) {
  auto reply = std::move(call.reply);
  if (!reply) return;  // the link's own subscription calls
  failures_.fetch_add(1);
  reply(forward_unavailable(message, reason, opt_.node_id));
}

void node_link::run() {
  for (;;) {
    std::deque<link_call> fresh;
    bool stop = false;
    {
      std::lock_guard lock(mu_);
      stop = stopping_;
      fresh.swap(queue_);
    }
    if (stop) {
      for (auto& c : fresh) fail(c, "this node is stopping; node " + opt_.node_id + " was not asked", "link_lost");
      broken("this node is stopping");
      return;
    }
    if ((!fresh.empty() || wants_events()) && !client_ && !connect(fresh)) {
      if (fresh.empty()) wait_for_work();  // only subscriptions: tried again when woken
      continue;                            // connect() failed the calls
    }
    for (auto& c : fresh) send(std::move(c));
    if (client_) subscribe_wanted();
    if (client_) drain();
    expire();
    wait_for_work();
  }
}

bool node_link::connect(std::deque<link_call>& fresh) {
  gateway_client_options o;
  o.host = opt_.where.host;
  o.port = opt_.where.port;
  o.identity = opt_.who;
  o.connect_timeout = opt_.connect_timeout;
  auto c = gateway_client::connect(o);
  if (!c) {
    const std::string why = "node " + opt_.node_id + " at " + opt_.where.host + ":" + std::to_string(opt_.where.port) +
                            " cannot be reached: " + c.error().message();
    spdlog::warn("gateway: forwarding: {}", why);
    std::deque<link_call> waiting;
    {
      std::lock_guard lock(mu_);
      waiting.swap(queue_);
    }
    // What this attempt was for, and what came meanwhile, fail alike.
    for (auto& c2 : fresh) fail(c2, why, "node_unreachable");
    for (auto& c2 : waiting) fail(c2, why, "node_unreachable");
    return false;
  }
  client_ = std::move(*c);
  connects_.fetch_add(1);
  // A new connection holds no subscription of the old one.
  sent_sessions_ = false;
  sent_keys_.clear();
  return true;
}

void node_link::send(link_call call) {
  if (!client_) {
    // The connection broke earlier in this round.
    fail(call, "lost the connection to node " + opt_.node_id + " before " + call.method + " was sent", "link_lost");
    return;
  }
  const std::string id = "f" + std::to_string(next_id_++);
  const std::string frame = request_frame(id, call.method, call.params);
  const auto deadline = steady::now() + call.timeout;
  pending_.emplace(id, pending{std::move(call), deadline});
  if (status st = client_->socket().send_text(frame); !st.ok()) broken(st.message());
}

void node_link::drain() {
  while (client_) {
    auto text = client_->socket().receive_text(std::chrono::milliseconds(0));
    if (!text) {
      if (text.error().code() != errc::timeout) broken(text.error().message());
      return;
    }
    on_frame(*text);
  }
}

void node_link::on_frame(const std::string& text) {
  auto f = parse_server_frame(text);
  if (!f) {
    spdlog::warn("gateway: forwarding: node {} sent a frame that is not the protocol's: {}", opt_.node_id, f.error().message());
    return;
  }
  if (f->type == server_frame::kind::event) {
    if (f->event == "chat") on_chat_event(std::move(f->payload));
    else if (on_event_ && (f->event == "sessions.changed" || f->event == "session.message"))
      on_event_(f->event, std::move(f->payload));
    return;
  }
  auto it = pending_.find(f->id);
  if (it == pending_.end()) return;  // answered already (timed out)
  link_call call = std::move(it->second.call);
  pending_.erase(it);
  if (!f->ok) {
    if (auto reply = std::move(call.reply)) reply(relayed_error(*f, text));
    return;
  }
  if (call.method == "sessions.messages.subscribe" && !call.session_key.empty()) {
    // The peer now pushes this session's messages here: kept after a reconnect too.
    std::lock_guard lock(mu_);
    want_keys_.insert(call.session_key);
    sent_keys_.insert(call.session_key);
  }
  if ((call.method == "chat.send" || call.method == "sessions.create") && f->payload.is_object()) {
    // Its events follow on this connection: they go to the caller, started now or retried (a
    // sessions.create with a message starts its first run as chat.send does).
    const auto& p = f->payload.as_object();
    const auto run = json::get_string(p, "runId");
    const auto state = json::get_string(p, "status").value_or("");
    if (run && (state == "started" || state == "in_flight")) {
      open_run& r = runs_[std::string(*run)];  // a retried run keeps the seq seen so far
      r.origin = call.origin;
      r.session_key = call.session_key;
      r.agent_id = agent_of(call.session_key);
    }
  }
  if (auto reply = std::move(call.reply)) reply(std::move(f->payload));
}

void node_link::on_chat_event(bj::value payload) {
  if (!payload.is_object()) return;
  const auto& p = payload.as_object();
  const std::string key(json::get_string(p, "sessionKey").value_or(""));
  if (key.empty()) return;
  const std::string run(json::get_string(p, "runId").value_or(""));
  std::uint64_t origin = 0;
  if (auto it = runs_.find(run); it != runs_.end()) {
    origin = it->second.origin;
    it->second.seq = std::max(it->second.seq, json::get_int(p, "seq").value_or(it->second.seq));
    if (closes_run(json::get_string(p, "state").value_or(""))) runs_.erase(it);
  }
  on_chat_(origin, key, std::move(payload));
}

void node_link::expire() {
  const auto now = steady::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    link_call call = std::move(it->second.call);
    it = pending_.erase(it);
    fail(call, "node " + opt_.node_id + " did not answer " + call.method + " within " +
                   std::to_string(call.timeout.count()) + " ms",
         "node_timeout");
  }
}

void node_link::broken(const std::string& why) {
  if (client_) spdlog::info("gateway: forwarding: connection to node {} ended: {}", opt_.node_id, why);
  client_.reset();
  sent_sessions_ = false;
  sent_keys_.clear();
  auto waiting = std::move(pending_);
  pending_.clear();
  for (auto& [id, p] : waiting)
    fail(p.call, "lost the connection to node " + opt_.node_id + " while waiting for " + p.call.method + ": " + why,
         "link_lost");
  auto runs = std::move(runs_);
  runs_.clear();
  for (auto& [run, r] : runs) {
    bj::object ev{{"runId", run},
                  {"sessionKey", r.session_key},
                  {"agentId", r.agent_id},
                  {"seq", r.seq + 1},
                  {"state", "error"},
                  {"errorMessage", "lost the connection to node " + opt_.node_id +
                                       ", which runs this session: " + why +
                                       " (the run may still finish there; chat.history shows it)"},
                  {"errorKind", "unknown"}};
    on_chat_(r.origin, r.session_key, std::move(ev));
  }
}

void node_link::wait_for_work() {
  int timeout_ms = -1;
  if (!pending_.empty()) {
    auto next = std::min_element(pending_.begin(), pending_.end(),
                                 [](const auto& a, const auto& b) { return a.second.deadline < b.second.deadline; })
                    ->second.deadline;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - steady::now()).count();
    timeout_ms = static_cast<int>(std::clamp<long long>(left + 1, 0, 1 << 30));
  }
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {client_ ? client_->socket().native_handle() : -1, POLLIN, 0}};
  int r = ::poll(fds, client_ ? 2 : 1, timeout_ms);
  if (r < 0 && errno != EINTR) spdlog::warn("gateway: forwarding: poll failed: errno {}", errno);
  if (r > 0 && (fds[0].revents & POLLIN)) {
    std::uint64_t n = 0;
    (void)!::read(wake_fd_, &n, sizeof n);
  }
}

}  // namespace sessionrt::gateway
