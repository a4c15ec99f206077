#include "gateway/ws_socket.hpp"

#include <spdlog/spdlog.h>
#include <wslay/wslay.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "gateway/connection_state.hpp"

namespace sessionrt::gateway {

namespace {

uv_handle_t* handle(uv_tcp_t& t) { return reinterpret_cast<uv_handle_t*>(&t); }
uv_handle_t* handle(uv_timer_t& t) { return reinterpret_cast<uv_handle_t*>(&t); }
uv_stream_t* stream(uv_tcp_t& t) { return reinterpret_cast<uv_stream_t*>(&t); }

std::uint64_t non_negative(std::int64_t ms) { return static_cast<std::uint64_t>(std::max<std::int64_t>(0, ms)); }

}  // namespace

struct ws_socket::write_req {
  uv_write_t req{};
  std::string data;
  bool pong = false;
};

// libuv's and wslay's callbacks: `data` / `user` is the socket.
struct ws_socket::callbacks {
  static ws_socket& of(void* p) { return *static_cast<ws_socket*>(p); }

  static ssize_t recv(wslay_event_context_ptr ctx, uint8_t* buf, size_t len, int, void* user) {
    auto& s = of(user);
    const std::size_t avail = s.in_.size() - s.in_pos_;
    if (avail == 0) {
      wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
      return -1;
    }
    const std::size_t n = std::min(avail, len);
    std::memcpy(buf, s.in_.data() + s.in_pos_, n);
    s.in_pos_ += n;
    return static_cast<ssize_t>(n);
  }

  static ssize_t send(wslay_event_context_ptr ctx, const uint8_t* data, size_t len, int, void* user) {
    auto& s = of(user);
    if (uv_is_closing(handle(s.tcp_))) {
      wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
      return -1;
    }
    s.outbound(data, len);
    return static_cast<ssize_t>(len);
  }

  static void frame_start(wslay_event_context_ptr, const wslay_event_on_frame_recv_start_arg* arg, void* user) {
    auto& s = of(user);
    const bool data = arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME ||
                      arg->opcode == WSLAY_CONTINUATION_FRAME;
    if (!data || s.message_open_) return;
    // A message begun (one frame sent slowly or the first of fragments) must end in time: wslay
    // holds what came of it, up to the payload limit.
    s.message_open_ = true;
    s.set_deadline(phase_deadlines::kind::message, non_negative(s.limits_.message_timeout_ms));
  }

  static void message(wslay_event_context_ptr, const wslay_event_on_msg_recv_arg* arg, void* user) {
    auto& s = of(user);
    if (arg->opcode == WSLAY_PING) {
      s.last_ping_.assign(reinterpret_cast<const char*>(arg->msg), arg->msg_length);
      return;
    }
    if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME) {
      s.message_open_ = false;
      s.clear_deadline(phase_deadlines::kind::message);
    }
    if (arg->opcode == WSLAY_TEXT_FRAME) {
      s.owner_.on_text(std::string_view(reinterpret_cast<const char*>(arg->msg), arg->msg_length));
    } else if (arg->opcode == WSLAY_BINARY_FRAME) {
      s.metrics_.refused(refusal::bad_frame);
      s.close(1003, "binary frames are not supported");
    }
  }

  static const wslay_event_callbacks& wslay() {
    static const wslay_event_callbacks cbs = [] {
      wslay_event_callbacks c{};
      c.recv_callback = recv;
      c.send_callback = send;
      c.on_frame_recv_start_callback = frame_start;
      c.on_msg_recv_callback = message;
      return c;
    }();
    return cbs;
  }

  static void closed(uv_handle_t* h) { of(h->data).handle_closed(); }
};

ws_socket::ws_socket(uv_loop_t& loop, owner& o, gateway_metrics& metrics, std::uint64_t id, limits l)
    : loop_(loop), owner_(o), metrics_(metrics), id_(id), limits_(l), budget_(l.max_buffered_bytes) {}

ws_socket::~ws_socket() {
  if (ws_) wslay_event_context_free(ws_);
}

bool ws_socket::accept(uv_stream_t* listener) {
  uv_tcp_init(&loop_, &tcp_);
  uv_timer_init(&loop_, &timer_);
  tcp_.data = this;
  timer_.data = this;
  handles_open_ = 2;
  if (uv_accept(listener, stream(tcp_)) != 0) {
    close_now();
    return false;
  }
  uv_tcp_nodelay(&tcp_, 1);
  return true;
}

std::uint64_t ws_socket::now_ms() const { return uv_now(&loop_); }

// ---- reading ------------------------------------------------------------------------------

void ws_socket::start_reading() {
  reading_ = true;
  uv_read_start(
      stream(tcp_),
      [](uv_handle_t*, size_t, uv_buf_t* buf) {
        // Taken before the read callback returns: one buffer per loop thread serves every socket.
        thread_local char read_buf[64 * 1024];
        *buf = uv_buf_init(read_buf, sizeof(read_buf));
      },
      [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
        if (n == 0) return;
        callbacks::of(s->data).on_read(static_cast<long>(n), buf->base);
      });
}

void ws_socket::stop_reading() {
  uv_read_stop(stream(tcp_));
  reading_ = false;
}

void ws_socket::on_read(long n, const char* data) {
  if (n < 0) {
    close_now();
    return;
  }
  if (mode_ == mode::http) {
    owner_.on_bytes(data, static_cast<std::size_t>(n));
    return;
  }
  if (mode_ != mode::ws) return;  // closing: dropped until the peer's end (end_after_writes)
  // After wslay queued its own close (a frame over the limit, a protocol error) it reads no
  // more: what still comes is dropped, not buffered.
  if (!wslay_event_get_read_enabled(ws_)) return;
  received(data, static_cast<std::size_t>(n));
}

void ws_socket::received(const char* data, std::size_t n) {
  if (!ws_ || mode_ != mode::ws) return;
  in_.append(data, n);
  receive();
}

void ws_socket::receive() {
  if (wslay_event_recv(ws_) != 0) {
    close_now();
    return;
  }
  if (in_pos_ >= in_.size()) {
    in_.clear();
    in_pos_ = 0;
  }
  flush();
}

// ---- writing ------------------------------------------------------------------------------

void ws_socket::write_raw(std::string data) { write(std::move(data), false); }

void ws_socket::write(std::string data, bool pong) {
  if (handles_open_ == 0 || uv_is_closing(handle(tcp_))) return;
  auto* w = new write_req{};
  w->data = std::move(data);
  w->pong = pong;
  uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
  w->req.data = this;
  // Pending writes are cancelled before the handle's close callback, so the socket is alive.
  const int rc = uv_write(&w->req, stream(tcp_), &buf, 1, [](uv_write_t* r, int) {
    auto* wr = reinterpret_cast<write_req*>(r);
    auto& s = callbacks::of(r->data);
    const bool was_pong = wr->pong;
    delete wr;
    // A failed write shows as a read error or EOF, which closes the socket.
    s.written(was_pong);
  });
  if (rc != 0) {
    delete w;
    if (pong) pong_in_flight_ = false;
  }
}

// A write finished: the unsent output shrank; a pong owed goes now, answering the latest ping.
void ws_socket::written(bool pong) {
  if (pong) pong_in_flight_ = false;
  if (mode_ == mode::closing || uv_is_closing(handle(tcp_))) return;
  if (pong && pong_owed_ && ws_) {
    pong_owed_ = false;
    wslay_event_msg msg{WSLAY_PONG, reinterpret_cast<const uint8_t*>(last_ping_.data()), last_ping_.size()};
    if (wslay_event_queue_msg(ws_, &msg) == 0) {
      flush();
      return;
    }
  }
  note_unsent();
}

std::size_t ws_socket::unsent() const {
  std::size_t n = uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_)) + out_.size();
  if (ws_) n += wslay_event_get_queued_msg_length(ws_);
  return n;
}

void ws_socket::note_unsent() {
  metrics_.buffered_bytes.fetch_add(budget_.set(unsent()));
  metrics_.buffered_peak(budget_.unsent());
}

// Outbound bytes as wslay hands them over: a frame's header in one call (we always take
// everything), then its payload. A pong while another is still unwritten is dropped: RFC 6455
// 5.5.3 lets an endpoint answer only the latest of the pings it has not answered yet.
void ws_socket::outbound(const std::uint8_t* data, std::size_t len) {
  if (out_left_ == 0 && len >= 2) {
    const unsigned opcode = data[0] & 0x0fu;
    std::uint64_t payload = data[1] & 0x7fu;
    if (payload == 126 && len >= 4) {
      payload = (std::uint64_t{data[2]} << 8) | data[3];
    } else if (payload == 127 && len >= 10) {
      payload = 0;
      for (int i = 2; i < 10; ++i) payload = (payload << 8) | data[i];
    }
    out_left_ = payload;
    out_drop_ = false;
    if (opcode == WSLAY_PONG) {
      if (pong_in_flight_ || out_has_pong_) {
        out_drop_ = true;
        pong_owed_ = true;
        metrics_.pongs_coalesced.fetch_add(1);
      } else {
        out_has_pong_ = true;
        pong_in_flight_ = true;
      }
    }
  } else {
    out_left_ -= std::min<std::uint64_t>(out_left_, len);
  }
  if (!out_drop_) out_.append(reinterpret_cast<const char*>(data), len);
}

bool ws_socket::upgrade(std::size_t max_payload) {
  if (wslay_event_context_server_init(&ws_, &callbacks::wslay(), this) != 0) {
    ws_ = nullptr;
    close_now();
    return false;
  }
  wslay_event_config_set_max_recv_msg_length(ws_, max_payload);
  mode_ = mode::ws;
  return true;
}

void ws_socket::set_max_payload(std::size_t n) {
  if (ws_) wslay_event_config_set_max_recv_msg_length(ws_, n);
}

bool ws_socket::queue_text(const std::string& text) {
  if (!ws_ || mode_ != mode::ws || close_begun_) return false;
  // What is still unsent decides (a single frame larger than the limit may go out to a reader
  // that keeps up; one that does not read is closed at the next frame).
  note_unsent();
  if (budget_.over()) {
    slow_consumer();
    return false;
  }
  wslay_event_msg msg{WSLAY_TEXT_FRAME, reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  if (wslay_event_queue_msg(ws_, &msg) != 0) {
    close_now();
    return false;
  }
  metrics_.frames_out.fetch_add(1);
  return true;
}

void ws_socket::flush() {
  if (!ws_ || mode_ == mode::closing) return;
  const int rc = wslay_event_send(ws_);
  if (!out_.empty()) write(std::exchange(out_, std::string()), std::exchange(out_has_pong_, false));
  if (rc != 0) {
    close_now();
    return;
  }
  note_unsent();
  if (!close_begun_ && budget_.over()) {
    // Control frames count too: a peer that sends and never reads is a slow consumer as well.
    slow_consumer();
    return;
  }
  if (!oversize_counted_ && wslay_event_get_close_sent(ws_) &&
      wslay_event_get_status_code_sent(ws_) == WSLAY_CODE_MESSAGE_TOO_BIG) {
    oversize_counted_ = true;
    metrics_.refused(refusal::oversized_frame);
  }
  if (!wslay_event_want_read(ws_) && !wslay_event_want_write(ws_)) end_after_writes();
}

// This frame and later ones are not queued; the close frame goes after what is (the client
// reads it once it caught up), as for the other policy closes.
void ws_socket::slow_consumer() {
  metrics_.refused(refusal::slow_consumer);
  spdlog::warn("gateway: connection {} has {} bytes unsent (maxBufferedBytes {}): closed as a slow consumer", id_,
               budget_.unsent(), budget_.max());
  close(close_code::policy, "slow consumer", kSlowConsumerGraceMs);
}

// ---- closing ------------------------------------------------------------------------------

void ws_socket::begin_close() {
  if (close_begun_) return;
  close_begun_ = true;
  owner_.on_close_begun();
}

void ws_socket::close(int code, const std::string& reason, std::uint64_t grace_ms) {
  if (!ws_ || mode_ == mode::closing) return;
  begin_close();
  // What is queued goes first (a shutdown event, an error answer): wslay sends control frames
  // ahead of queued messages and nothing after its close frame.
  flush();
  if (mode_ == mode::closing) return;
  wslay_event_queue_close(ws_, static_cast<uint16_t>(code), reinterpret_cast<const uint8_t*>(reason.data()),
                          std::min<std::size_t>(reason.size(), 123));
  flush();
  if (mode_ == mode::closing) return;
  deadlines_ = phase_deadlines{};
  set_deadline(phase_deadlines::kind::close_grace, grace_ms);
}

void ws_socket::end_after_writes() {
  if (mode_ == mode::closing) return;
  begin_close();
  auto* req = new uv_shutdown_t{};
  req->data = this;
  mode_ = mode::closing;
  deadlines_ = phase_deadlines{};
  set_deadline(phase_deadlines::kind::close_grace, kCloseGraceMs);
  if (uv_shutdown(req, stream(tcp_), [](uv_shutdown_t* r, int st) {
        auto& s = callbacks::of(r->data);
        delete r;
        if (st != 0 || uv_is_closing(handle(s.tcp_))) {
          s.close_now();
          return;
        }
        if (!s.reading_) s.start_reading();  // to see the peer's end
      }) != 0) {
    delete req;
    close_now();
  }
}

void ws_socket::close_now() {
  if (mode_ == mode::closing && handles_open_ == 0) return;
  if (uv_is_closing(handle(tcp_))) return;
  mode_ = mode::closing;
  begin_close();
  owner_.on_closed();
  metrics_.buffered_bytes.fetch_add(budget_.release());
  uv_timer_stop(&timer_);
  uv_close(handle(timer_), callbacks::closed);
  uv_close(handle(tcp_), callbacks::closed);
}

void ws_socket::handle_closed() {
  if (--handles_open_ > 0) return;
  owner_.on_gone();  // may free this socket: nothing after it
}

// ---- deadlines ----------------------------------------------------------------------------

void ws_socket::set_deadline(phase_deadlines::kind k, std::uint64_t in_ms) {
  deadlines_.set(k, uv_now(&loop_) + in_ms);
  arm();
}

void ws_socket::clear_deadline(phase_deadlines::kind k) {
  if (!deadlines_.armed(k)) return;
  deadlines_.clear(k);
  arm();
}

void ws_socket::arm() {
  if (uv_is_closing(handle(timer_))) return;
  uv_timer_stop(&timer_);
  const auto next = deadlines_.next();
  if (!next) return;
  const std::uint64_t now = uv_now(&loop_);
  uv_timer_start(&timer_, [](uv_timer_t* h) { callbacks::of(h->data).on_timer(); }, *next > now ? *next - now : 0, 0);
}

void ws_socket::on_timer() {
  using k = phase_deadlines::kind;
  const std::uint64_t now = uv_now(&loop_);
  while (auto due = deadlines_.due(now)) {
    deadlines_.clear(*due);
    switch (*due) {
      case k::message:
        if (!message_open_ || close_begun_) break;
        count_refusal(metrics_, refusal::message_timeout,
                      fmt::format("connection {}: a message unfinished after {} ms", id_, limits_.message_timeout_ms));
        close(close_code::policy, "message timeout");
        break;
      case k::close_grace: close_now(); return;
      case k::count_: break;
      default: owner_.on_deadline(*due); break;
    }
    if (uv_is_closing(handle(timer_))) return;
  }
  arm();
}

}  // namespace sessionrt::gateway
