#include "gateway/method_runner.hpp"
#include "gateway/ws_transport.hpp"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <spdlog/spdlog.h>
#include <uv.h>
#include <wslay/wslay.h>

#include <algorithm>
#include <cstring>
#include <condition_variable>
#include <filesystem>
#include <set>
#include <thread>
#include <utility>

#include "actors/router/route_resolver.hpp"
#include "gateway/admission.hpp"
#include "gateway/chat_runs.hpp"
#include "gateway/http_request.hpp"
#include "gateway/control_ui.hpp"  // control-ui hook
#include "gateway/connection_state.hpp"
#include "gateway/method_table.hpp"
#include "gateway/runner_pool.hpp"
#include "gateway/session_keys.hpp"
#include "gateway/session_notify.hpp"
#include "gateway/session_watchers.hpp"
#include "messages/ids.hpp"
#include "messages/json_access.hpp"
#include "messages/json_writer.hpp"

namespace sessionrt::gateway {
namespace bj = boost::json;

namespace {

// How long a closing connection may take to read what was queued before its close frame: a
// slow consumer first has up to maxBufferedBytes to drain.
// One log line for a refused client, counted first (metrics) and rate-limited by that count:
// the first three of a reason, then every 1000th, so that a flood of hostile sockets cannot
// flood the log. Never the token or a frame's text.
void count_refusal(gateway_metrics& metrics, refusal r, const std::string& what) {
  metrics.refused(r);
  const std::uint64_t n = metrics.refusals(r);
  if (n <= 3 || n % 1000 == 0)
    spdlog::warn("gateway: refused ({}, {} so far): {}", refusal_name(r), n, what);
}

constexpr std::uint64_t kCloseGraceMs = 2000;
constexpr std::uint64_t kSlowConsumerGraceMs = 10000;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

std::string websocket_accept(const std::string& key) {
  const std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(in.data()), in.size(), digest);
  unsigned char out[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
  return std::string(reinterpret_cast<char*>(out), static_cast<std::size_t>(n));
}

std::string res_ok(const std::string& id, const bj::value& payload) {
  std::string out = "{\"type\":\"res\",\"id\":";
  json::append_string(out, id);
  out += ",\"ok\":true,\"payload\":";
  json::append_compact(out, payload);
  out += '}';
  return out;
}

std::string res_error(const std::string& id, const frame_error& e) {
  std::string out = "{\"type\":\"res\",\"id\":";
  json::append_string(out, id);
  out += ",\"ok\":false,\"error\":";
  json::append_compact(out, e.to_json());
  out += '}';
  return out;
}

std::int64_t dir_bytes(const std::string& dir) {
  std::error_code ec;
  std::int64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) total += static_cast<std::int64_t>(it->file_size(e2));
  }
  return total;
}

}  // namespace

struct ws_transport::conn {
  uv_tcp_t tcp{};
  uv_timer_t timer{};
  ws_transport::impl* t = nullptr;
  std::uint64_t id = 0;
  http_request req;
  enum class mode { http, ws, closing } m = mode::http;
  wslay_event_context_ptr ws = nullptr;
  std::string in;
  std::size_t in_pos = 0;
  connection_state state;
  int handles_open = 0;
  bool admitted = false;      // counted by the admission (closed() is owed)
  bool counted = false;       // a WebSocket the admission counted, in connections_open
  bool authed = false;        // connect succeeded (no longer unauthenticated)
  bool reading = false;
  bool oversize_counted = false;
  bool dirty = false;         // frames queued in wslay, flushed after the posted batch
  std::string out;            // what one wslay_event_send produced: one write for all of it
  phase_deadlines deadlines;  // one timer for the earliest
  std::size_t in_flight = 0;  // requests on the method runner, not answered yet
  bool message_open = false;  // a data frame began and its message has not ended
  // Outbound frames as wslay hands them over (header, then payload): what is left of the
  // current frame's payload, and whether that frame is dropped (a coalesced pong).
  std::uint64_t out_left = 0;
  bool out_drop = false;
  bool out_has_pong = false;   // `out` carries a pong
  bool pong_in_flight = false; // a pong was handed to libuv and is not written yet
  bool pong_owed = false;      // pongs were dropped meanwhile: one answers last_ping once it is
  std::string last_ping;       // the payload of the latest ping
  std::size_t buffered_reported = 0;  // this connection's share of metrics->buffered_bytes
  explicit conn(std::size_t max_buffered) : state(max_buffered) {}
};

struct ws_transport::work {
  uv_work_t req{};
  ws_transport::impl* t = nullptr;
  std::uint64_t conn = 0;
  std::string id;
  const method_entry* method = nullptr;
  bj::object params;
  method_outcome out;
  std::function<void()> fn;  // run_later
};

struct ws_transport::impl {
  transport_options opt;
  gateway_core& core;
  ws_transport* self = nullptr;
  uv_loop_t loop{};
  uv_tcp_t listener{};
  uv_async_t async{};
  uv_timer_t tick{};
  uv_signal_t sigterm{}, sigint{};
  std::mutex post_mu;
  bool posts_open = true;
  std::vector<std::function<void()>> posted;
  std::map<std::uint64_t, std::unique_ptr<conn>> conns;
  session_watchers watchers;  // session key -> the connections watching it
  std::uint64_t next_id = 0;
  // While the posted work runs, frames are only queued; each connection is then written once.
  bool batching = false;
  std::vector<std::uint64_t> dirty;
  connection_admission admission;
  std::atomic<std::size_t> sessions_subscribers{0};  // open connections with sessions_subscribed
  bool stopping = false;
  wslay_event_callbacks callbacks{};
  char read_buf[64 * 1024];

  impl(transport_options o, gateway_core& c)
      : opt(std::move(o)),
        core(c),
        admission(admission_limits{opt.max_connections, opt.max_unauthenticated, opt.fd_reserve}, real_fd_probe()),
        methods(opt.method_threads, opt.max_queued_requests) {}

  void post(std::function<void()> fn) {
    std::lock_guard lock(post_mu);
    if (!posts_open) return;
    posted.push_back(std::move(fn));
    uv_async_send(&async);
  }

  conn* find(std::uint64_t id) {
    auto it = conns.find(id);
    return it == conns.end() ? nullptr : it->second.get();
  }

  // ---- raw writes -------------------------------------------------------------------------
  struct write_req {
    uv_write_t req;
    std::string data;
    bool pong = false;
  };
  void write_raw(conn* c, std::string data, bool pong = false) {
    if (c->handles_open == 0 || uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->tcp))) return;
    auto* w = new write_req{};
    w->data = std::move(data);
    w->pong = pong;
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    w->req.data = c;
    // Pending writes are cancelled before the handle's close callback, so `c` is alive here.
    const int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), &buf, 1, [](uv_write_t* r, int st) {
      auto* wr = reinterpret_cast<write_req*>(r);
      auto* cc = static_cast<conn*>(r->data);
      const bool pong = wr->pong;
      delete wr;
      (void)st;  // a failed write shows as a read error / EOF, which closes the connection
      cc->t->written(cc, pong);
    });
    if (rc != 0) {
      delete w;
      if (pong) c->pong_in_flight = false;
    }
  }

  // A write finished: the unsent output shrank; a pong owed goes now, answering the latest ping.
  void written(conn* c, bool pong) {
    if (pong) c->pong_in_flight = false;
    if (c->m == conn::mode::closing || uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->tcp))) return;
    if (pong && c->pong_owed && c->ws) {
      c->pong_owed = false;
      wslay_event_msg msg{WSLAY_PONG, reinterpret_cast<const uint8_t*>(c->last_ping.data()), c->last_ping.size()};
      if (wslay_event_queue_msg(c->ws, &msg) == 0) {
        flush(c);
        return;
      }
    }
    note_buffered(c);
  }

  // What this connection has not sent yet: libuv's write queue (bytes the kernel did not take),
  // wslay's queue (control frames included) and what is about to be written.
  std::size_t unsent(conn* c) const {
    std::size_t n = uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&c->tcp)) + c->out.size();
    if (c->ws) n += wslay_event_get_queued_msg_length(c->ws);
    return n;
  }

  void note_buffered(conn* c) {
    const std::size_t now = unsent(c);
    c->state.set_buffered(now);
    core.metrics->buffered_bytes.fetch_add(static_cast<std::int64_t>(now) - static_cast<std::int64_t>(c->buffered_reported));
    c->buffered_reported = now;
    core.metrics->buffered_peak(now);
  }

  // ---- deadlines --------------------------------------------------------------------------
  void set_deadline(conn* c, phase_deadlines::kind k, std::uint64_t in_ms) {
    c->deadlines.set(k, uv_now(&loop) + in_ms);
    arm(c);
  }
  void clear_deadline(conn* c, phase_deadlines::kind k) {
    if (!c->deadlines.armed(k)) return;
    c->deadlines.clear(k);
    arm(c);
  }
  void arm(conn* c) {
    if (uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->timer))) return;
    uv_timer_stop(&c->timer);
    const auto next = c->deadlines.next();
    if (!next) return;
    const std::uint64_t now = uv_now(&loop);
    uv_timer_start(&c->timer, [](uv_timer_t* h) {
      auto* cc = static_cast<conn*>(h->data);
      cc->t->on_deadline(cc);
    }, *next > now ? *next - now : 0, 0);
  }
  void on_deadline(conn* c) {
    using k = phase_deadlines::kind;
    const std::uint64_t now = uv_now(&loop);
    while (auto due = c->deadlines.due(now)) {
      c->deadlines.clear(*due);
      switch (*due) {
        case k::request_head:
          // Slow or endless request heads and bodies (one byte a second) end here.
          if (c->m != conn::mode::http) break;
          count_refusal(*core.metrics, refusal::request_timeout,
                        fmt::format("connection {}: no complete HTTP request within {} ms", c->id, opt.request_timeout_ms));
          http_reply(c, 408, "Request Timeout", "text/plain", "the HTTP request took too long\n");
          break;
        case k::handshake:
          if (c->state.current() != connection_state::phase::awaiting_connect) break;
          count_refusal(*core.metrics, refusal::handshake_timeout,
                        fmt::format("connection {}: no connect within {} ms", c->id, opt.handshake_timeout_ms));
          close_ws(c, close_code::policy, "handshake timeout");
          break;
        case k::message:
          if (!c->message_open || c->state.current() == connection_state::phase::closed) break;
          count_refusal(*core.metrics, refusal::message_timeout,
                        fmt::format("connection {}: a message unfinished after {} ms", c->id, opt.message_timeout_ms));
          close_ws(c, close_code::policy, "message timeout");
          break;
        case k::refusal: {
          const bool stop = stopping;
          close_ws(c, stop ? close_code::going_away : close_code::too_many, stop ? "gateway stopping" : "too many connections");
          break;
        }
        case k::close_grace: close_now(c); return;
        case k::count_: break;
      }
      if (uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->timer))) return;
    }
    arm(c);
  }

  // ---- closing ----------------------------------------------------------------------------
  void on_handle_closed(conn* c) {
    if (--c->handles_open > 0) return;
    if (c->ws) wslay_event_context_free(c->ws);
    c->ws = nullptr;
    conns.erase(c->id);
  }

  void close_now(conn* c) {
    if (c->m == conn::mode::closing && c->handles_open == 0) return;
    if (uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->tcp))) return;
    c->m = conn::mode::closing;
    c->state.mark_closed();
    if (c->admitted) {
      c->admitted = false;
      admission.closed(c->counted, c->authed);
      if (!c->authed) core.metrics->unauthenticated_open.fetch_sub(1);
    }
    if (c->counted) {
      c->counted = false;
      core.metrics->connections_open.fetch_sub(1);
    }
    core.metrics->buffered_bytes.fetch_sub(static_cast<std::int64_t>(c->buffered_reported));
    c->buffered_reported = 0;
    if (c->state.events_subscription) core.rt->unsubscribe(*c->state.events_subscription);
    c->state.events_subscription.reset();
    if (c->state.runner) core.runners->detach(c->id);
    c->state.runner = false;
    for (const auto& key : c->state.watched()) watchers.remove(key, c->id);
    if (c->state.sessions_subscribed) sessions_subscribers.fetch_sub(1);
    c->state.sessions_subscribed = false;
    auto closed = [](uv_handle_t* h) {
      auto* cc = static_cast<conn*>(h->data);
      cc->t->on_handle_closed(cc);
    };
    uv_timer_stop(&c->timer);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), closed);
  }

  // Ends the TCP stream once what is queued was written (FIN after the last byte), then reads
  // and drops what the peer still sends until it closes too or kCloseGraceMs passed: closing
  // while its bytes arrive would answer them with a reset, which can destroy the close frame
  // or the HTTP answer in the peer's receive queue before it read them.
  void shutdown_then_close(conn* c) {
    if (c->m == conn::mode::closing) return;
    auto* req = new uv_shutdown_t{};
    req->data = c;
    c->m = conn::mode::closing;
    c->deadlines = phase_deadlines{};
    set_deadline(c, phase_deadlines::kind::close_grace, kCloseGraceMs);
    if (uv_shutdown(req, reinterpret_cast<uv_stream_t*>(&c->tcp), [](uv_shutdown_t* r, int st) {
          auto* cc = static_cast<conn*>(r->data);
          delete r;
          if (st != 0 || uv_is_closing(reinterpret_cast<uv_handle_t*>(&cc->tcp))) {
            cc->t->close_now(cc);
            return;
          }
          if (!cc->reading) cc->t->start_reading(cc);  // to see the peer's end
        }) != 0) {
      delete req;
      close_now(c);
    }
  }

  // A WebSocket close frame (after what is queued), then the socket once the peer answers or
  // grace_ms passed. Nothing more is queued to the connection meanwhile.
  void close_ws(conn* c, int code, const std::string& reason, std::uint64_t grace_ms = kCloseGraceMs) {
    if (!c->ws || c->m == conn::mode::closing) return;
    c->state.mark_closed();
    // What is queued goes first (a shutdown event, an error answer): wslay sends control frames
    // ahead of queued messages and nothing after its close frame.
    flush(c);
    if (c->m == conn::mode::closing) return;
    wslay_event_queue_close(c->ws, static_cast<uint16_t>(code), reinterpret_cast<const uint8_t*>(reason.data()),
                            std::min<std::size_t>(reason.size(), 123));
    flush(c);
    if (c->m == conn::mode::closing) return;
    c->deadlines = phase_deadlines{};
    set_deadline(c, phase_deadlines::kind::close_grace, grace_ms);
  }

  void flush(conn* c) {
    if (!c->ws || c->m == conn::mode::closing) return;
    const int rc = wslay_event_send(c->ws);
    if (!c->out.empty()) write_raw(c, std::exchange(c->out, std::string()), std::exchange(c->out_has_pong, false));
    if (rc != 0) {
      close_now(c);
      return;
    }
    note_buffered(c);
    if (c->state.current() != connection_state::phase::closed && c->state.over_buffer()) {
      // Control frames count too: a peer that sends and never reads is a slow consumer as well.
      slow_consumer(c);
      return;
    }
    if (!c->oversize_counted && wslay_event_get_close_sent(c->ws) &&
        wslay_event_get_status_code_sent(c->ws) == WSLAY_CODE_MESSAGE_TOO_BIG) {
      c->oversize_counted = true;
      core.metrics->refused(refusal::oversized_frame);
    }
    if (!wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws)) shutdown_then_close(c);
  }

  // ---- frames -----------------------------------------------------------------------------
  void send_text(conn* c, const std::string& text) {
    if (!c->ws || c->m != conn::mode::ws || c->state.current() == connection_state::phase::closed) return;
    // What is still unsent decides (a single frame larger than the limit may go out to a
    // reader that keeps up; one that does not read is closed at the next frame).
    note_buffered(c);
    if (c->state.over_buffer()) {
      slow_consumer(c);
      return;
    }
    wslay_event_msg msg{WSLAY_TEXT_FRAME, reinterpret_cast<const uint8_t*>(text.data()), text.size()};
    if (wslay_event_queue_msg(c->ws, &msg) != 0) {
      close_now(c);
      return;
    }
    core.metrics->frames_out.fetch_add(1);
    if (!batching) {
      flush(c);
    } else if (!c->dirty) {
      c->dirty = true;
      dirty.push_back(c->id);
    }
  }

  // This frame and later ones are not queued; the close frame goes after what is (the client
  // reads it once it caught up), as for the other policy closes.
  void slow_consumer(conn* c) {
    core.metrics->refused(refusal::slow_consumer);
    spdlog::warn("gateway: connection {} has {} bytes unsent (maxBufferedBytes {}): closed as a slow consumer", c->id,
                 c->state.buffered(), opt.max_buffered_bytes);
    close_ws(c, close_code::policy, "slow consumer", kSlowConsumerGraceMs);
  }

  void send_event(conn* c, const std::string& name, const std::string& payload_json) {
    std::string out = "{\"type\":\"event\",\"event\":";
    json::append_string(out, name);
    out += ",\"payload\":";
    out += payload_json;
    out += ",\"seq\":";
    out += std::to_string(c->state.next_seq());
    out += '}';
    core.metrics->events_out.fetch_add(1);
    send_text(c, out);
  }

  bj::object hello(conn* c) {
    const std::string def_agent = actors::default_agent_of(core.rt->settings().routing);
    bj::array scopes;
    for (const auto& s : c->state.scopes()) scopes.emplace_back(bj::string(s));
    const auto& session = core.rt->settings().routing.session;
    const std::string main_key = session.main_key.empty() ? std::string("main") : session.main_key;
    return bj::object{
        {"type", "hello-ok"},
        {"protocol", kGatewayProtocol},
        {"server", bj::object{{"version", core.server_version}, {"connId", std::to_string(c->id)}}},
        {"features", bj::object{{"methods", method_names()}, {"events", event_names()}, {"capabilities", bj::array{}}}},
        {"snapshot",
         bj::object{{"presence", bj::array{}},
                    {"health", bj::object{}},
                    {"stateVersion", bj::object{{"presence", 0}, {"health", 0}}},
                    {"uptimeMs", core.now_ms() - core.started_ms},
                    {"stateDir", core.rt->state_dir()},
                    {"sessionDefaults", bj::object{{"defaultAgentId", def_agent},
                                                   {"mainKey", main_key},
                                                   {"mainSessionKey", "agent:" + def_agent + ":" + main_key},
                                                   {"scope", session.scope == actors::session_scope::global ? "global" : "per-sender"}}},
                    {"authMode", "token"}}},
        {"auth", bj::object{{"method", "token"}, {"role", "operator"}, {"scopes", std::move(scopes)}}},
        {"policy", bj::object{{"maxPayload", opt.max_payload},
                              {"maxBufferedBytes", opt.max_buffered_bytes},
                              {"tickIntervalMs", opt.tick_interval_ms}}}};
  }

  void handle_text(conn* c, std::string_view text) {
    if (c->state.current() == connection_state::phase::closed) return;
    core.metrics->frames_in.fetch_add(1);
    const bool before = c->state.current() == connection_state::phase::awaiting_connect;
    inbound_frame f = c->state.on_text(text);
    switch (f.what) {
      case inbound_frame::kind::close:
        core.metrics->refused(f.close.reason.rfind("invalid request frame: not", 0) == 0 ? refusal::not_json
                              : before && f.error.message.rfind("invalid handshake", 0) == 0 ? refusal::before_connect
                                                                                              : refusal::bad_frame);
        if (f.respond_first) send_text(c, res_error(f.id, f.error));
        close_ws(c, f.close.code, f.close.reason);
        return;
      case inbound_frame::kind::error:
        core.metrics->refused(refusal::bad_frame);
        send_text(c, res_error(f.id, f.error));
        return;
      case inbound_frame::kind::request: break;
    }
    if (f.method == "connect") {
      auto v = c->state.check_connect(f.params, opt.token);
      if (std::string why; core.ui && !core.ui->origin_allowed(c->req.headers(), &why))  // control-ui hook
        v = with_origin_check(std::move(v), false, why);                                  // control-ui hook
      if (!v.ok) {
        const bj::value* dc = f.error.details.is_object() ? f.error.details.as_object().if_contains("code") : nullptr;
        const bj::value* vc = v.error.details.is_object() ? v.error.details.as_object().if_contains("code") : nullptr;
        (void)dc;
        const std::string code = vc && vc->is_string() ? std::string(vc->get_string()) : std::string();
        count_refusal(*core.metrics,
                      code == "PROTOCOL_MISMATCH"                                   ? refusal::protocol_mismatch
                      : code == "AUTH_TOKEN_MISMATCH" || code == "AUTH_TOKEN_MISSING" ? refusal::token_mismatch
                                                                                      : refusal::bad_connect,
                      fmt::format("connection {}: connect refused: {} ({})", c->id,
                                  code.empty() ? std::string("bad connect params") : code, v.close.reason));
        send_text(c, res_error(f.id, v.error));
        close_ws(c, v.close.code, v.close.reason);
        return;
      }
      clear_deadline(c, phase_deadlines::kind::handshake);
      if (c->admitted && !c->authed) {
        c->authed = true;
        admission.authenticated();
        core.metrics->unauthenticated_open.fetch_sub(1);
      }
      wslay_event_config_set_max_recv_msg_length(c->ws, opt.max_payload);
      send_text(c, res_ok(f.id, hello(c)));
      return;
    }
    core.metrics->requests.fetch_add(1);
    const method_entry* m = find_method(f.method);
    if (!m) {
      core.metrics->refused(refusal::unknown_method);
      send_text(c, res_error(f.id, error_of("unknown method: " + f.method)));
      return;
    }
    if (!c->state.allowed(m->scope)) {
      core.metrics->refused(refusal::forbidden);
      send_text(c, res_error(f.id, error_of("missing scope: " + std::string(scope_name(m->scope)), "FORBIDDEN")));
      return;
    }
    if (!f.params.is_null() && !f.params.is_object()) {
      core.metrics->refused(refusal::bad_params);
      send_text(c, res_error(f.id, error_of("invalid " + f.method + " params: must be object")));
      return;
    }
    if (!m->on_loop && c->in_flight >= opt.max_requests_in_flight) {
      // Refused before anything is queued: a flood from one connection costs it answers, not
      // the others their turn (method_runner serves connections in turn as well).
      core.metrics->refused(refusal::busy_connection);
      send_text(c, res_error(f.id, busy("gateway busy: " + std::to_string(c->in_flight) +
                                        " requests of this connection in flight (gateway.maxRequestsInFlight)")));
      return;
    }
    bj::object params = f.params.is_object() ? f.params.get_object() : bj::object{};
    // Before the call runs: a chat.send's first delta, or any run after the history was read,
    // then reaches this connection.
    if (const auto field = watch_param(f.method); !field.empty())
      if (const auto raw = json::get_string(params, field))
        if (auto key = resolve_session_key(*core.rt, std::string(*raw)); key.ok()) watch(c, key->key);
    if (m->on_loop) {
      const bool subscribed = c->state.sessions_subscribed;
      method_call call{params, core, c->id, &c->state};
      answer(c, f.id, m->handler(call));
      if (subscribed != c->state.sessions_subscribed) {
        if (c->state.sessions_subscribed) sessions_subscribers.fetch_add(1);
        else sessions_subscribers.fetch_sub(1);
      }
      return;
    }
    auto* w = new work{};
    w->t = this;
    w->conn = c->id;
    w->id = f.id;
    w->method = m;
    w->params = std::move(params);
    auto job = job_of(w);
    if (!methods.try_post(job, c->id)) {
      delete w;
      core.metrics->refused(refusal::busy_queue);
      send_text(c, res_error(f.id, busy("gateway busy: " + std::to_string(opt.max_queued_requests) +
                                        " calls waiting (gateway.maxQueuedRequests)")));
      return;
    }
    ++c->in_flight;
  }

  // OpenClaw's ErrorShape for a request a busy server did not take: UNAVAILABLE, retryable.
  frame_error busy(std::string message) const {
    frame_error e;
    e.code = "UNAVAILABLE";
    e.message = std::move(message);
    e.retryable = true;
    e.retry_after_ms = opt.busy_retry_after_ms;
    return e;
  }

  void watch(conn* c, const std::string& key) {
    auto change = c->state.watch(key);
    if (change.added) watchers.add(key, c->id);
    if (change.evicted) watchers.remove(*change.evicted, c->id);
  }

  void to_session(std::uint64_t origin, const std::string& key, const std::string& name, const bj::value& payload) {
    const auto& watching = watchers.of(key);
    // A copy: sending may close a connection, which changes the index.
    std::vector<std::uint64_t> targets(watching.begin(), watching.end());
    if (std::find(targets.begin(), targets.end(), origin) == targets.end()) targets.push_back(origin);
    std::string body;
    for (std::uint64_t id : targets) {
      conn* c = find(id);
      if (!c || c->m != conn::mode::ws || c->state.current() != connection_state::phase::open) continue;
      if (body.empty()) body = json::to_compact(payload);
      send_event(c, name, body);
    }
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
    }, static_cast<std::uint64_t>(std::max<std::int64_t>(0, delay.count())), 0);
  }

  void drop_later(later* l) {
    laters.erase(l);
    uv_close(reinterpret_cast<uv_handle_t*>(&l->timer), [](uv_handle_t* h) { delete static_cast<later*>(h->data); });
  }

  void answer(conn* c, const std::string& id, const method_outcome& out) {
    if (const auto* e = std::get_if<frame_error>(&out)) {
      if (e->message.rfind("invalid ", 0) == 0 && e->message.find(" params: ") != std::string::npos)
        core.metrics->refused(refusal::bad_params);
      send_text(c, res_error(id, *e));
    } else {
      send_text(c, res_ok(id, std::get<bj::value>(out)));
    }
  }

  // A method that may wait on the runtime runs on the method runner (at most
  // opt.method_threads at once, each on a thread that ends with the call: method_runner.hpp).
  // The answer comes back to the loop.
  method_runner methods;

  void queue(work* w) { methods.post(job_of(w)); }

  std::function<void()> job_of(work* w) {
    return [w] {
      impl* im = w->t;
      try {
        if (w->fn) {
          w->fn();
        } else {
          method_call call{w->params, im->core, w->conn, nullptr};
          w->out = w->method->handler(call);
        }
      } catch (const std::exception& ex) {
        w->out = error_of(std::string("internal error: ") + ex.what(), "UNAVAILABLE");
      }
      std::unique_ptr<work> owned(w);
      if (!owned->fn) {
        im->post([im, wk = std::shared_ptr<work>(std::move(owned))] {
          conn* c = im->find(wk->conn);
          if (c && c->in_flight > 0) --c->in_flight;
          if (!c || c->m != conn::mode::ws || c->state.current() != connection_state::phase::open)
            im->core.metrics->refused(refusal::disconnect_mid_request);
          else
            im->answer(c, wk->id, wk->out);
        });
      }
    };
  }

  // ---- HTTP -------------------------------------------------------------------------------
  void http_reply(conn* c, int code, const char* reason, const std::string& type, const std::string& body) {
    std::string out = "HTTP/1.1 " + std::to_string(code) + " " + reason + "\r\nContent-Type: " + type +
                      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    write_raw(c, std::move(out));
    shutdown_then_close(c);
  }

  bool bearer_ok(conn* c) {
    return c->req.header("authorization") == "Bearer " + opt.token;
  }

  void handle_http(conn* c) {
    clear_deadline(c, phase_deadlines::kind::request_head);
    const std::string method = c->req.method();
    const std::string path = c->req.path();
    if (c->req.current() == http_request::state::upgrade) {
      upgrade(c);
      return;
    }
    if (method != "GET") {
      core.metrics->refused(refusal::bad_http);
      http_reply(c, 405, "Method Not Allowed", "text/plain", "only GET is served\n");
      return;
    }
    if (path == "/healthz") {
      bj::object o{{"ok", !core.rt->stopped()},
                   {"uptimeMs", core.now_ms() - core.started_ms},
                   {"connections", static_cast<std::int64_t>(admission.websockets())},
                   {"port", port_of()},
                   {"protocol", kGatewayProtocol}};
      http_reply(c, 200, "OK", "application/json", json::to_compact(o) + "\n");
      return;
    }
    if (path == "/metrics") {
      if (!bearer_ok(c)) {
        core.metrics->refused(refusal::bad_http);
        http_reply(c, 401, "Unauthorized", "text/plain", "/metrics needs Authorization: Bearer <gateway token>\n");
        return;
      }
      // The runtime's figures are asked for on a worker, then the reply goes out on the loop.
      auto sample = std::make_shared<std::string>();
      auto* w = new work{};
      w->t = this;
      const auto id = c->id;
      w->fn = [this, sample, id] {
        runtime_sample s;
        auto calls = core.rt->model_calls();
        s.model_running = calls.running;
        s.model_waiting = calls.waiting;
        const std::string stats = core.rt->stats();
        auto field = [&](const char* name) -> std::int64_t {
          const std::string key = std::string(name) + "=";
          auto at = stats.find(key);
          if (at == std::string::npos) return -1;
          return std::atoll(stats.c_str() + at + key.size());
        };
        s.live_sessions = field("live");
        s.trimmed_sessions = field("trimmed");
        if (auto rows = core.rt->sessions(); rows.ok()) s.stored_sessions = static_cast<std::int64_t>(rows->size());
        s.disk_bytes = dir_bytes(core.rt->state_dir() + "/agents");
        s.disk_budget_bytes = core.rt->settings().maintenance.max_disk_bytes;
        s.methods_running = methods.running();
        s.methods_waiting = methods.waiting();
        s.methods_peak_running = methods.peak_running();
        s.methods_peak_waiting = methods.peak_waiting();
        *sample = core.metrics->render(s);
        post([this, sample, id] {
          if (conn* cc = find(id)) http_reply(cc, 200, "OK", "text/plain; version=0.0.4", *sample);
        });
      };
      uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->tcp));  // one request per connection
      c->reading = false;
      queue(w);
      return;
    }
    if (auto r = core.ui ? core.ui->serve(method, c->req.url(), c->req.headers()) : std::nullopt) {  // control-ui hook
      write_raw(c, r->wire());  // control-ui hook
      shutdown_then_close(c);   // control-ui hook
      return;                   // control-ui hook
    }                           // control-ui hook
    core.metrics->refused(refusal::bad_http);
    http_reply(c, 404, "Not Found", "text/plain", "not found: GET /healthz, GET /metrics, or a WebSocket upgrade\n");
  }

  int port_of() const { return self->port(); }

  void upgrade(conn* c) {
    auto h = [&](const char* name) {
      return c->req.header(name);
    };
    const std::string key = h("sec-websocket-key");
    if (lower(h("upgrade")).find("websocket") == std::string::npos || key.empty() || h("sec-websocket-version") != "13") {
      core.metrics->refused(refusal::bad_http);
      http_reply(c, 400, "Bad Request", "text/plain", "a WebSocket upgrade needs Upgrade: websocket, Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n");
      return;
    }
    write_raw(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
                     websocket_accept(key) + "\r\n\r\n");
    if (wslay_event_context_server_init(&c->ws, &callbacks, c) != 0) {
      close_now(c);
      return;
    }
    wslay_event_config_set_max_recv_msg_length(c->ws, kPreHandshakeMaxPayload);
    c->m = conn::mode::ws;
    core.metrics->connections_opened.fetch_add(1);
    if (stopping || !admission.upgraded()) {
      // No challenge: the client learns why from the close frame, sent on the next loop turn
      // so that it does not share a TCP segment with the 101 answer.
      count_refusal(*core.metrics, refusal::too_many_connections,
                    fmt::format("connection {}: gateway.maxConnections ({}) reached", c->id, opt.max_connections));
      set_deadline(c, phase_deadlines::kind::refusal, 20);
      return;
    }
    c->counted = true;
    core.metrics->connections_open.fetch_add(1);
    // The challenge goes first and carries no seq.
    bj::object challenge{{"type", "event"},
                         {"event", "connect.challenge"},
                         {"payload", bj::object{{"nonce", new_uuid_v4()}, {"ts", core.now_ms()}}}};
    send_text(c, json::to_compact(challenge));
    set_deadline(c, phase_deadlines::kind::handshake, static_cast<std::uint64_t>(std::max<std::int64_t>(0, opt.handshake_timeout_ms)));
  }

  void on_read(conn* c, ssize_t n, const char* data) {
    if (n < 0) {
      close_now(c);
      return;
    }
    if (c->m == conn::mode::http) {
      std::size_t used = 0;
      const auto st = c->req.feed(data, static_cast<std::size_t>(n), used);
      if (st == http_request::state::upgrade) {
        handle_http(c);
        if (c->m == conn::mode::ws && used < static_cast<std::size_t>(n)) {
          c->in.append(data + used, static_cast<std::size_t>(n) - used);
          receive(c);
        }
        return;
      }
      if (st == http_request::state::error) {
        core.metrics->refused(refusal::bad_http);
        http_reply(c, 400, "Bad Request", "text/plain", "bad HTTP request: " + c->req.error() + "\n");
        return;
      }
      if (st == http_request::state::complete) handle_http(c);
      return;
    }
    if (c->m != conn::mode::ws) return;  // closing: dropped until the peer's end (shutdown_then_close)
    // After wslay queued its own close (a frame over the limit, a protocol error) it reads no
    // more: what still comes is dropped, not buffered.
    if (!wslay_event_get_read_enabled(c->ws)) return;
    c->in.append(data, static_cast<std::size_t>(n));
    receive(c);
  }

  void receive(conn* c) {
    if (wslay_event_recv(c->ws) != 0) {
      close_now(c);
      return;
    }
    if (c->in_pos >= c->in.size()) {
      c->in.clear();
      c->in_pos = 0;
    }
    flush(c);
  }

  void accept_one() {
    auto owned = std::make_unique<conn>(opt.max_buffered_bytes);
    conn* c = owned.get();
    c->t = this;
    c->id = ++next_id;
    uv_tcp_init(&loop, &c->tcp);
    uv_timer_init(&loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->handles_open = 2;
    conns[c->id] = std::move(owned);
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener), reinterpret_cast<uv_stream_t*>(&c->tcp)) != 0) {
      close_now(c);
      return;
    }
    switch (admission.accepted(uv_now(&loop))) {
      case connection_admission::verdict::admit: break;
      case connection_admission::verdict::fd_reserve:
        count_refusal(*core.metrics, refusal::fd_reserve, "a socket at accept: too close to the open-file limit");
        close_now(c);
        return;
      case connection_admission::verdict::too_many_unauthenticated:
        count_refusal(*core.metrics, refusal::too_many_unauthenticated,
                      "a socket at accept: gateway.maxUnauthenticated sockets are not past connect");
        close_now(c);
        return;
    }
    c->admitted = true;
    core.metrics->unauthenticated_open.fetch_add(1);
    uv_tcp_nodelay(&c->tcp, 1);
    // The whole request (head and any body) within the request timeout, however slowly it trickles.
    set_deadline(c, phase_deadlines::kind::request_head,
                 static_cast<std::uint64_t>(std::max<std::int64_t>(0, opt.request_timeout_ms)));
    start_reading(c);
  }

  void start_reading(conn* c) {
    c->reading = true;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&c->tcp),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* cc = static_cast<conn*>(h->data);
          *buf = uv_buf_init(cc->t->read_buf, sizeof(cc->t->read_buf));
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* cc = static_cast<conn*>(s->data);
          if (n == 0) return;
          cc->t->on_read(cc, n, buf->base);
        });
  }

  // Outbound bytes as wslay hands them over: a frame's header in one call (we always take
  // everything), then its payload. A pong while another is still unwritten is dropped: RFC
  // 6455 5.5.3 lets an endpoint answer only the latest of the pings it has not answered yet,
  // so a ping flood from a peer that does not read costs one pending pong, not one per ping.
  void outbound(conn* c, const std::uint8_t* data, std::size_t len) {
    if (c->out_left == 0 && len >= 2) {
      const unsigned opcode = data[0] & 0x0fu;
      std::uint64_t payload = data[1] & 0x7fu;
      if (payload == 126 && len >= 4) payload = (std::uint64_t{data[2]} << 8) | data[3];
      else if (payload == 127 && len >= 10) {
        payload = 0;
        for (int i = 2; i < 10; ++i) payload = (payload << 8) | data[i];
      }
      c->out_left = payload;
      c->out_drop = false;
      if (opcode == WSLAY_PONG) {
        if (c->pong_in_flight || c->out_has_pong) {
          c->out_drop = true;
          c->pong_owed = true;
          core.metrics->pongs_coalesced.fetch_add(1);
        } else {
          c->out_has_pong = true;
          c->pong_in_flight = true;
        }
      }
    } else {
      c->out_left -= std::min<std::uint64_t>(c->out_left, len);
    }
    if (!c->out_drop) c->out.append(reinterpret_cast<const char*>(data), len);
  }

  void setup_callbacks() {
    callbacks.recv_callback = [](wslay_event_context_ptr ctx, uint8_t* buf, size_t len, int, void* user) -> ssize_t {
      auto* c = static_cast<conn*>(user);
      const std::size_t avail = c->in.size() - c->in_pos;
      if (avail == 0) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
        return -1;
      }
      const std::size_t n = std::min(avail, len);
      std::memcpy(buf, c->in.data() + c->in_pos, n);
      c->in_pos += n;
      return static_cast<ssize_t>(n);
    };
    callbacks.send_callback = [](wslay_event_context_ptr ctx, const uint8_t* data, size_t len, int, void* user) -> ssize_t {
      auto* c = static_cast<conn*>(user);
      if (uv_is_closing(reinterpret_cast<uv_handle_t*>(&c->tcp))) {
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
      }
      c->t->outbound(c, data, len);
      return static_cast<ssize_t>(len);
    };
    callbacks.on_frame_recv_start_callback = [](wslay_event_context_ptr, const wslay_event_on_frame_recv_start_arg* arg,
                                                void* user) {
      auto* c = static_cast<conn*>(user);
      const bool data = arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME ||
                        arg->opcode == WSLAY_CONTINUATION_FRAME;
      if (!data || c->message_open) return;
      // A message begun (one frame sent slowly or the first of fragments) must end in time:
      // wslay holds what came of it, up to the payload limit.
      c->message_open = true;
      c->t->set_deadline(c, phase_deadlines::kind::message, static_cast<std::uint64_t>(std::max<std::int64_t>(0, c->t->opt.message_timeout_ms)));
    };
    callbacks.on_msg_recv_callback = [](wslay_event_context_ptr, const wslay_event_on_msg_recv_arg* arg, void* user) {
      auto* c = static_cast<conn*>(user);
      if (arg->opcode == WSLAY_PING) {
        c->last_ping.assign(reinterpret_cast<const char*>(arg->msg), arg->msg_length);
        return;
      }
      if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME) {
        c->message_open = false;
        c->t->clear_deadline(c, phase_deadlines::kind::message);
      }
      if (arg->opcode == WSLAY_TEXT_FRAME)
        c->t->handle_text(c, std::string_view(reinterpret_cast<const char*>(arg->msg), arg->msg_length));
      else if (arg->opcode == WSLAY_BINARY_FRAME) {
        c->t->core.metrics->refused(refusal::bad_frame);
        c->t->close_ws(c, 1003, "binary frames are not supported");
      }
    };
  }

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
      if (conn* c = find(id)) {
        c->dirty = false;
        flush(c);
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
      if (c->m == conn::mode::ws) {
        std::string shutdown = "{\"type\":\"event\",\"event\":\"shutdown\",\"payload\":{\"reason\":\"gateway stopping\"},\"seq\":" +
                               std::to_string(c->state.next_seq()) + "}";
        if (c->state.current() == connection_state::phase::open) send_text(c, shutdown);
        close_ws(c, close_code::going_away, "gateway stopping");
      } else {
        close_now(c);
      }
    }
    // The loop ends once every connection closed and the workers finished; then the async.
    uv_timer_init(&loop, &closer);
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
    closer.data = this;
  }
  uv_timer_t closer{};
};

ws_transport::ws_transport(transport_options options, gateway_core& core)
    : impl_(std::make_unique<impl>(std::move(options), core)) {
  impl_->self = this;
  uv_loop_init(&impl_->loop);
  impl_->setup_callbacks();
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
      if (c->m == conn::mode::ws && c->state.current() == connection_state::phase::open) open.push_back(c.get());
    for (conn* c : open) m->send_event(c, "tick", payload);
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

void ws_transport::request_stop() {
  impl_->post([im = impl_.get()] { im->stop_on_loop(); });
}

void ws_transport::event_to(std::uint64_t conn_id, std::string name, bj::value payload) {
  impl_->post([im = impl_.get(), conn_id, name = std::move(name), payload = std::move(payload)] {
    conn* c = im->find(conn_id);
    if (!c || c->m != conn::mode::ws || c->state.current() != connection_state::phase::open) return;
    im->send_event(c, name, json::to_compact(payload));
  });
}

void ws_transport::broadcast(audience who, std::string name, bj::value payload) {
  impl_->post([im = impl_.get(), who, name = std::move(name), payload = std::move(payload)] {
    const std::string body = json::to_compact(payload);
    std::vector<conn*> targets;
    for (auto& [id, c] : im->conns)
      if (c->m == conn::mode::ws && c->state.current() == connection_state::phase::open &&
          (who == audience::operators || c->state.sessions_subscribed))
        targets.push_back(c.get());
    for (conn* c : targets) im->send_event(c, name, body);
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
  return who == audience::operators || impl_->sessions_subscribers.load() > 0;
}

void ws_transport::run_later(std::function<void()> fn) {
  impl_->post([im = impl_.get(), fn = std::move(fn)]() mutable {
    auto* w = new work{};
    w->t = im;
    w->fn = std::move(fn);
    im->queue(w);
  });
}

}  // namespace sessionrt::gateway
