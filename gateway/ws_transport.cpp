#include "gateway/ws_transport.hpp"

#include <spdlog/spdlog.h>
#include <uv.h>

#include <algorithm>
#include <set>
#include <utility>

#include "gateway/admission.hpp"
#include "gateway/frame_dispatch.hpp"
#include "gateway/http_front.hpp"
#include "gateway/http_request.hpp"
#include "gateway/method_runner.hpp"
#include "gateway/ws_socket.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

std::uint64_t non_negative(std::int64_t ms) { return static_cast<std::uint64_t>(std::max<std::int64_t>(0, ms)); }

}  // namespace

// One connection: its socket, its HTTP request, what the dispatcher keeps of it, and its
// standing with the admission. It owns its socket's callbacks and hands each to its layer.
struct ws_transport::conn final : ws_socket::owner {
  conn(impl& transport, std::uint64_t conn_id);
  impl& t;
  ws_socket sock;
  http_request req;
  dispatch_conn d;
  bool admitted = false;  // counted by the admission (closed() is owed)
  bool counted = false;   // a WebSocket the admission counted, in connections_open
  bool authed = false;    // connect succeeded (no longer unauthenticated)
  bool dirty = false;     // frames queued, flushed after the posted batch

  std::uint64_t id() const { return d.id; }
  // A WebSocket past connect that still takes frames.
  bool open() const {
    return sock.current() == ws_socket::mode::ws && d.state.current() == connection_state::phase::open;
  }

  void on_bytes(const char* data, std::size_t n) override;
  void on_text(std::string_view text) override;
  void on_deadline(phase_deadlines::kind k) override;
  void on_close_begun() override { d.state.mark_closed(); }
  void on_closed() override;
  void on_gone() override;
};

struct ws_transport::impl final : dispatch_port, http_host {
  transport_options opt;
  gateway_core& core;
  ws_transport* self = nullptr;
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t async{};
  uv_timer_t tick{};
  uv_timer_t closer{};
  uv_signal_t sigterm{}, sigint{};
  std::mutex post_mu;
  bool posts_open = true;
  std::vector<std::function<void()>> posted;
  std::map<std::uint64_t, std::unique_ptr<conn>> conns;
  std::uint64_t next_id = 0;
  // While the posted work runs, frames are only queued; each connection is then written once.
  bool batching = false;
  std::vector<std::uint64_t> dirty;
  connection_admission admission;
  bool stopping = false;
  // Calls that may wait on the runtime (methods, /metrics, deliveries): at most
  // opt.method_threads at once, opt.max_queued_requests waiting for requests (method_runner.hpp).
  method_runner methods;
  frame_dispatch dispatch;
  http_front http;

  impl(transport_options o, gateway_core& c)
      : opt(std::move(o)),
        core(c),
        admission(admission_limits{opt.max_connections, opt.max_unauthenticated, opt.fd_reserve}, real_fd_probe()),
        methods(opt.method_threads, opt.max_queued_requests),
        dispatch(dispatch_options{opt.token, opt.max_payload, opt.max_buffered_bytes, opt.tick_interval_ms,
                                  opt.max_requests_in_flight, opt.max_queued_requests, opt.busy_retry_after_ms},
                 core, *this),
        http(http_front_options{opt.token, opt.request_timeout_ms, opt.busy_retry_after_ms}, core, methods,
             opt.files ? *opt.files : storage::posix_fs(), *this) {}

  void post(std::function<void()> fn) {
    std::lock_guard lock(post_mu);
    if (!posts_open) return;
    posted.push_back(std::move(fn));
    uv_async_send(&async);
  }

  conn* find_conn(std::uint64_t id) {
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second.get();
  }

  // ---- frames out -------------------------------------------------------------------------
  void send_text(conn& c, const std::string& text) {
    if (!c.sock.queue_text(text)) return;
    if (!batching) {
      c.sock.flush();
    } else if (!c.dirty) {
      c.dirty = true;
      dirty.push_back(c.id());
    }
  }

  void send_event(conn& c, std::string_view name, const std::string& payload_json) {
    core.metrics->events_out.fetch_add(1);
    send_text(c, event_frame(name, payload_json, c.d.state.next_seq()));
  }

  void to_session(std::uint64_t origin, const std::string& key, const std::string& name, const bj::value& payload) {
    std::string body;
    for (std::uint64_t id : dispatch.audience_of(origin, key)) {
      conn* c = find_conn(id);  // sending may close a connection: looked up each time
      if (!c || !c->open()) continue;
      if (body.empty()) body = json::to_compact(payload);
      send_event(*c, name, body);
    }
  }

  // ---- dispatch_port ----------------------------------------------------------------------
  void send(dispatch_conn& d, const std::string& text) override {
    if (conn* c = find_conn(d.id)) send_text(*c, text);
  }
  void close(dispatch_conn& d, int code, const std::string& reason) override {
    if (conn* c = find_conn(d.id)) c->sock.close(code, reason);
  }
  void connected(dispatch_conn& d) override {
    conn* c = find_conn(d.id);
    if (!c) return;
    c->sock.clear_deadline(phase_deadlines::kind::handshake);
    if (c->admitted && !c->authed) {
      c->authed = true;
      admission.authenticated();
      core.metrics->unauthenticated_open.fetch_sub(1);
    }
    c->sock.set_max_payload(opt.max_payload);
  }
  bool run_off_loop(std::uint64_t conn_id, std::function<void()>& job) override { return methods.try_post(job, conn_id); }
  void to_loop(std::function<void()> fn) override { post(std::move(fn)); }
  dispatch_conn* find(std::uint64_t id) override {
    conn* c = find_conn(id);
    return c ? &c->d : nullptr;
  }

  // ---- http_host --------------------------------------------------------------------------
  void upgraded(ws_socket& sock) override {
    conn* c = find_conn(sock.id());
    if (!c) return;
    c->d.http_headers = &c->req.headers();
    core.metrics->connections_opened.fetch_add(1);
    if (stopping || !admission.upgraded()) {
      // No challenge: the client learns why from the close frame, sent on the next loop turn so
      // that it does not share a TCP segment with the 101 answer.
      count_refusal(*core.metrics, refusal::too_many_connections,
                    fmt::format("connection {}: gateway.maxConnections ({}) reached", c->id(), opt.max_connections));
      sock.set_deadline(phase_deadlines::kind::refusal, 20);
      return;
    }
    c->counted = true;
    core.metrics->connections_open.fetch_add(1);
    dispatch.opened(c->d);
    sock.set_deadline(phase_deadlines::kind::handshake, non_negative(opt.handshake_timeout_ms));
  }
  std::size_t websockets() const override { return admission.websockets(); }
  ws_socket* socket_of(std::uint64_t id) override {
    conn* c = find_conn(id);
    return c ? &c->sock : nullptr;
  }

  // ---- a connection's life ----------------------------------------------------------------
  void accept_one() {
    auto owned = std::make_unique<conn>(*this, ++next_id);
    conn& c = *owned;
    conns[c.id()] = std::move(owned);
    if (!c.sock.accept(reinterpret_cast<uv_stream_t*>(&listener))) return;
    switch (admission.accepted(uv_now(&loop))) {
      case connection_admission::verdict::admit: break;
      case connection_admission::verdict::fd_reserve:
        count_refusal(*core.metrics, refusal::fd_reserve, "a socket at accept: too close to the open-file limit");
        c.sock.close_now();
        return;
      case connection_admission::verdict::too_many_unauthenticated:
        count_refusal(*core.metrics, refusal::too_many_unauthenticated,
                      "a socket at accept: gateway.maxUnauthenticated sockets are not past connect");
        c.sock.close_now();
        return;
    }
    c.admitted = true;
    core.metrics->unauthenticated_open.fetch_add(1);
    // The whole request (head and any body) within the request timeout, however slowly it trickles.
    c.sock.set_deadline(phase_deadlines::kind::request_head, non_negative(opt.request_timeout_ms));
    c.sock.start_reading();
  }

  void on_deadline(conn& c, phase_deadlines::kind k) {
    switch (k) {
      case phase_deadlines::kind::request_head: http.request_timeout(c.sock); break;
      case phase_deadlines::kind::handshake: dispatch.handshake_expired(c.d, opt.handshake_timeout_ms); break;
      case phase_deadlines::kind::refusal:
        c.sock.close(stopping ? close_code::going_away : close_code::too_many,
                     stopping ? "gateway stopping" : "too many connections");
        break;
      default: break;
    }
  }

  // The socket is going: its admission, gauges and protocol state are released.
  void release(conn& c) {
    if (c.admitted) {
      c.admitted = false;
      admission.closed(c.counted, c.authed);
      if (!c.authed) core.metrics->unauthenticated_open.fetch_sub(1);
    }
    if (c.counted) {
      c.counted = false;
      core.metrics->connections_open.fetch_sub(1);
    }
    dispatch.closed(c.d);
  }

  // ---- timers for frame_sink::after: closed unrun at stop -----------------------------------
  struct later {
    uv_timer_t timer{};
    impl* t = nullptr;
    std::function<void()> fn;
  };
  std::set<later*> laters;

  void start_later(std::chrono::milliseconds delay, std::function<void()> fn) {
    if (stopping) return;
    auto* l = new later{};
    l->t = this;
    l->fn = std::move(fn);
    uv_timer_init(&loop, &l->timer);
    l->timer.data = l;
    laters.insert(l);
    uv_timer_start(&l->timer, [](uv_timer_t* h) {
      auto* lt = static_cast<later*>(h->data);
      auto fn = std::move(lt->fn);
      lt->t->drop_later(lt);
      fn();
    }, non_negative(delay.count()), 0);
  }

  void drop_later(later* l) {
    laters.erase(l);
    uv_close(reinterpret_cast<uv_handle_t*>(&l->timer), [](uv_handle_t* h) { delete static_cast<later*>(h->data); });
  }

  // ---- the loop ---------------------------------------------------------------------------
  void drain_posted() {
    std::vector<std::function<void()>> todo;
    {
      std::lock_guard lock(post_mu);
      todo.swap(posted);
    }
    batching = true;
    for (auto& fn : todo) fn();
    batching = false;
    std::vector<std::uint64_t> written;
    written.swap(dirty);
    for (std::uint64_t id : written)
      if (conn* c = find_conn(id)) {
        c->dirty = false;
        c->sock.flush();
      }
  }

  void stop_on_loop() {
    if (stopping) return;
    stopping = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&listener), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
    if (opt.handle_signals) {
      uv_close(reinterpret_cast<uv_handle_t*>(&sigterm), nullptr);
      uv_close(reinterpret_cast<uv_handle_t*>(&sigint), nullptr);
    }
    for (later* l : std::vector<later*>(laters.begin(), laters.end())) drop_later(l);
    std::vector<conn*> all;
    for (auto& [id, c] : conns) all.push_back(c.get());
    for (conn* c : all) {
      if (c->sock.current() == ws_socket::mode::ws) {
        if (c->d.state.current() == connection_state::phase::open)
          send_text(*c, event_frame("shutdown", R"({"reason":"gateway stopping"})", c->d.state.next_seq()));
        c->sock.close(close_code::going_away, "gateway stopping");
      } else {
        c->sock.close_now();
      }
    }
    // The loop ends once every connection closed and the workers finished; then the async.
    uv_timer_init(&loop, &closer);
    closer.data = this;
    uv_timer_start(&closer, [](uv_timer_t* t) {
      auto* im = static_cast<impl*>(t->data);
      if (!im->conns.empty()) return;
      uv_timer_stop(t);
      uv_close(reinterpret_cast<uv_handle_t*>(t), nullptr);
      {
        std::lock_guard lock(im->post_mu);
        im->posts_open = false;
      }
      uv_close(reinterpret_cast<uv_handle_t*>(&im->async), nullptr);
    }, 10, 10);
  }
};

ws_transport::conn::conn(impl& transport, std::uint64_t conn_id)
    : t(transport),
      sock(transport.loop, *this, *transport.core.metrics, conn_id,
           ws_socket::limits{transport.opt.max_buffered_bytes, transport.opt.message_timeout_ms}),
      d(conn_id) {}

void ws_transport::conn::on_bytes(const char* data, std::size_t n) { t.http.on_bytes(sock, req, data, n); }
void ws_transport::conn::on_text(std::string_view text) { t.dispatch.on_text(d, text); }
void ws_transport::conn::on_deadline(phase_deadlines::kind k) { t.on_deadline(*this, k); }
void ws_transport::conn::on_closed() { t.release(*this); }
void ws_transport::conn::on_gone() { t.conns.erase(id()); }  // frees this connection: nothing after it

ws_transport::ws_transport(transport_options options, gateway_core& core)
    : impl_(std::make_unique<impl>(std::move(options), core)) {
  impl_->self = this;
  uv_loop_init(&impl_->loop);
  impl_->async.data = impl_.get();
  uv_async_init(&impl_->loop, &impl_->async, [](uv_async_t* a) {
    auto* im = static_cast<impl*>(a->data);
    im->drain_posted();
  });
}

ws_transport::~ws_transport() {
  if (!impl_) return;
  impl_->methods.wait_idle();  // every method call has returned (the runtime answered them all)
  uv_loop_close(&impl_->loop);
}

status ws_transport::listen() {
  auto& im = *impl_;
  sockaddr_storage addr{};
  int rc = uv_ip4_addr(im.opt.bind.c_str(), im.opt.port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) rc = uv_ip6_addr(im.opt.bind.c_str(), im.opt.port, reinterpret_cast<sockaddr_in6*>(&addr));
  if (rc != 0)
    return status(errc::invalid_argument, "gateway bind address " + im.opt.bind + " is not an IPv4 or IPv6 address");
  uv_tcp_init(&im.loop, &im.listener);
  im.listener.data = &im;
  rc = uv_tcp_bind(&im.listener, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&im.listener), 511, [](uv_stream_t* s, int st) {
      if (st == 0) static_cast<impl*>(s->data)->accept_one();
    });
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&im.listener), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&im.async), nullptr);
    uv_run(&im.loop, UV_RUN_DEFAULT);
    return status(errc::io_error, "gateway cannot listen on " + im.opt.bind + ":" + std::to_string(im.opt.port) + ": " +
                                      uv_strerror(rc));
  }
  sockaddr_storage bound{};
  int len = sizeof(bound);
  uv_tcp_getsockname(&im.listener, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  uv_timer_init(&im.loop, &im.tick);
  im.tick.data = &im;
  const auto every = static_cast<std::uint64_t>(std::max<std::int64_t>(1, im.opt.tick_interval_ms));
  uv_timer_start(&im.tick, [](uv_timer_t* t) {
    auto* m = static_cast<impl*>(t->data);
    const std::string payload = "{\"ts\":" + std::to_string(m->core.now_ms()) + "}";
    std::vector<conn*> open;
    for (auto& [id, c] : m->conns)
      if (c->open()) open.push_back(c.get());
    for (conn* c : open) m->send_event(*c, "tick", payload);
  }, every, every);
  if (im.opt.handle_signals) {
    for (auto* sig : {&im.sigterm, &im.sigint}) {
      uv_signal_init(&im.loop, sig);
      sig->data = this;
    }
    auto on = [](uv_signal_t* s, int) {
      auto* t = static_cast<ws_transport*>(s->data);
      if (t->on_signal) t->on_signal();
    };
    uv_signal_start(&im.sigterm, on, SIGTERM);
    uv_signal_start(&im.sigint, on, SIGINT);
  }
  return {};
}

void ws_transport::run() { uv_run(&impl_->loop, UV_RUN_DEFAULT); }

void ws_transport::wait_idle() { impl_->methods.wait_idle(); }

void ws_transport::request_stop() {
  impl_->post([im = impl_.get()] { im->stop_on_loop(); });
}

void ws_transport::event_to(std::uint64_t conn_id, std::string name, bj::value payload) {
  impl_->post([im = impl_.get(), conn_id, name = std::move(name), payload = std::move(payload)] {
    conn* c = im->find_conn(conn_id);
    if (!c || !c->open()) return;
    im->send_event(*c, name, json::to_compact(payload));
  });
}

void ws_transport::broadcast(audience who, std::string name, bj::value payload) {
  impl_->post([im = impl_.get(), who, name = std::move(name), payload = std::move(payload)] {
    const std::string body = json::to_compact(payload);
    std::vector<conn*> targets;
    for (auto& [id, c] : im->conns)
      if (c->open() && (who == audience::operators || c->d.state.sessions_subscribed)) targets.push_back(c.get());
    for (conn* c : targets) im->send_event(*c, name, body);
  });
}

void ws_transport::to_session(std::uint64_t origin, std::string session_key, std::string name, bj::value payload) {
  impl_->post([im = impl_.get(), origin, key = std::move(session_key), name = std::move(name),
               payload = std::move(payload)] { im->to_session(origin, key, name, payload); });
}

void ws_transport::after(std::chrono::milliseconds delay, std::function<void()> fn) {
  impl_->post([im = impl_.get(), delay, fn = std::move(fn)]() mutable { im->start_later(delay, std::move(fn)); });
}

bool ws_transport::has_audience(audience who) const {
  return who == audience::operators || impl_->dispatch.sessions_subscribers() > 0;
}

// The gateway's own work (deliveries after a run): queued whatever the bound, since losing it
// would lose a notification; it comes from runs, which the runtime bounds, not from requests.
void ws_transport::run_later(std::function<void()> fn) {
  impl_->post([im = impl_.get(), fn = std::move(fn)]() mutable {
    im->methods.post([fn = std::move(fn)] {
      try {
        fn();
      } catch (const std::exception& ex) {
        spdlog::warn("gateway: a delivery job failed: {}", ex.what());
      }
    });
  });
}

}  // namespace sessionrt::gateway
