#include "gateway/ws_client.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include <algorithm>
#include <cstring>

#include "messages/ascii_text.hpp"

namespace sessionrt::gateway {
namespace {

using steady = std::chrono::steady_clock;

constexpr std::string_view kWebSocketGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr std::size_t kMaxUpgradeResponse = 64 * 1024;

std::string base64(const unsigned char* data, std::size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

// Sec-WebSocket-Accept for a key: base64(SHA-1(key + GUID)) (RFC 6455 §4.2.2).
std::string accept_for(const std::string& key) {
  std::string in = key + std::string(kWebSocketGuid);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(in.data(), in.size(), md, &len, EVP_sha1(), nullptr);
  return base64(md, len);
}

int remaining_ms(steady::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

std::string errno_text(int e) { return std::strerror(e); }

// The upgrade response as http_parser reads it.
struct upgrade_response {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool last_was_value = true;
  bool headers_done = false;
  bool message_done = false;
};

int on_header_field(http_parser* p, const char* at, std::size_t len) {
  auto* r = static_cast<upgrade_response*>(p->data);
  if (r->last_was_value) r->headers.emplace_back();
  r->headers.back().first.append(at, len);
  r->last_was_value = false;
  return 0;
}
int on_header_value(http_parser* p, const char* at, std::size_t len) {
  auto* r = static_cast<upgrade_response*>(p->data);
  if (r->headers.empty()) return 0;
  r->headers.back().second.append(at, len);
  r->last_was_value = true;
  return 0;
}
int on_headers_complete(http_parser* p) {
  static_cast<upgrade_response*>(p->data)->headers_done = true;
  return 0;
}
int on_body(http_parser* p, const char* at, std::size_t len) {
  auto* r = static_cast<upgrade_response*>(p->data);
  if (r->body.size() < 4096) r->body.append(at, std::min<std::size_t>(len, 4096 - r->body.size()));
  return 0;
}
int on_message_complete(http_parser* p) {
  static_cast<upgrade_response*>(p->data)->message_done = true;
  return 0;
}

const std::string* header(const std::vector<std::pair<std::string, std::string>>& hs, std::string_view name) {
  for (const auto& [k, v] : hs)
    if (k == name) return &v;
  return nullptr;
}

}  // namespace

// wslay's callbacks, with access to the client's state.
struct ws_client::io {
  static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t* buf, size_t len, int, void* user) {
    auto* self = static_cast<ws_client*>(user);
    if (!self->pending_.empty()) {
      std::size_t n = std::min(len, self->pending_.size());
      std::memcpy(buf, self->pending_.data(), n);
      self->pending_.erase(0, n);
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      ssize_t r = ::recv(self->fd_, buf, len, 0);
      if (r > 0) return r;
      if (r == 0) {
        self->peer_eof_ = true;
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
      } else {
        self->io_error_ = "reading from the gateway socket: " + errno_text(errno);
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
      }
      return -1;
    }
  }
  static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t* data, size_t len, int, void* user) {
    auto* self = static_cast<ws_client*>(user);
    for (;;) {
      ssize_t r = ::send(self->fd_, data, len, MSG_NOSIGNAL);
      if (r >= 0) return r;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
      } else {
        self->io_error_ = "writing to the gateway socket: " + errno_text(errno);
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
      }
      return -1;
    }
  }
  static int genmask_cb(wslay_event_context_ptr, uint8_t* buf, size_t len, void*) {
    return RAND_bytes(buf, static_cast<int>(len)) == 1 ? 0 : -1;
  }
  static void on_msg_cb(wslay_event_context_ptr, const wslay_event_on_msg_recv_arg* arg, void* user) {
    auto* self = static_cast<ws_client*>(user);
    if (arg->opcode == WSLAY_TEXT_FRAME || arg->opcode == WSLAY_BINARY_FRAME) {
      self->inbox_.emplace_back(arg->opcode,
                                std::string(reinterpret_cast<const char*>(arg->msg), arg->msg_length));
    } else if (arg->opcode == WSLAY_CONNECTION_CLOSE) {
      self->close_code_ = arg->status_code == 0 ? std::uint16_t{1005} : arg->status_code;
      if (arg->msg_length > 2)
        self->close_reason_.assign(reinterpret_cast<const char*>(arg->msg) + 2, arg->msg_length - 2);
    }
  }
};

namespace {
wslay_event_context_ptr as_ctx(void* p) { return static_cast<wslay_event_context_ptr>(p); }

result<int> tcp_connect(const std::string& host, std::uint16_t port, steady::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  int gai = ::getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res);
  if (gai != 0) return status(errc::invalid_argument, "cannot resolve gateway host '" + host + "': " + gai_strerror(gai));
  std::string last = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = errno_text(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int r = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int pr;
      do pr = ::poll(&p, 1, remaining_ms(deadline));
      while (pr < 0 && errno == EINTR);
      if (pr == 0) {
        ::close(fd);
        ::freeaddrinfo(res);
        return status(errc::timeout, "connecting to the gateway at " + host + ":" + port_text + " timed out");
      }
      int err = 0;
      socklen_t el = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
      r = err == 0 ? 0 : -1;
      errno = err;
    }
    if (r == 0) {
      ::freeaddrinfo(res);
      return fd;
    }
    last = errno_text(errno);
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return status(errc::io_error, "cannot connect to the gateway at " + host + ":" + port_text + ": " + last);
}
}  // namespace

result<std::unique_ptr<ws_client>> ws_client::connect(const std::string& host, std::uint16_t port,
                                                      std::chrono::milliseconds timeout) {
  ws_connect_options o;
  o.host = host;
  o.port = port;
  o.timeout = timeout;
  return connect(o);
}

bool ws_client::port_answers(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout) {
  auto fd = tcp_connect(host, port, steady::now() + timeout);
  if (!fd) return false;
  ::close(*fd);
  return true;
}

result<std::unique_ptr<ws_client>> ws_client::connect(const ws_connect_options& options) {
  auto deadline = steady::now() + options.timeout;
  auto fd = tcp_connect(options.host, options.port, deadline);
  if (!fd) return fd.error();
  std::unique_ptr<ws_client> c(new ws_client());
  c->fd_ = *fd;
  SRT_RETURN_IF_ERROR(c->handshake(options, deadline));
  wslay_event_callbacks cbs{io::recv_cb, io::send_cb, io::genmask_cb, nullptr, nullptr, nullptr, io::on_msg_cb};
  wslay_event_context_ptr ctx = nullptr;
  if (wslay_event_context_client_init(&ctx, &cbs, c.get()) != 0)
    return status(errc::internal, "out of memory creating the WebSocket context");
  c->ctx_ = ctx;
  wslay_event_config_set_max_recv_msg_length(ctx, options.max_message_bytes);
  return c;
}

status ws_client::handshake(const ws_connect_options& options, steady::time_point deadline) {
  unsigned char nonce[16];
  if (RAND_bytes(nonce, sizeof nonce) != 1) return status(errc::internal, "no randomness for the WebSocket key");
  std::string key = base64(nonce, sizeof nonce);
  std::string host_header = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::string req = "GET " + options.path + " HTTP/1.1\r\nHost: " + host_header + ":" + std::to_string(options.port) +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                    "\r\nSec-WebSocket-Version: 13\r\n";
  for (const auto& [k, v] : options.headers) req += k + ": " + v + "\r\n";
  req += "\r\n";
  std::string where = options.host + ":" + std::to_string(options.port);

  for (std::size_t off = 0; off < req.size();) {
    ssize_t n = ::send(fd_, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) == 0)
        return status(errc::timeout, "sending the WebSocket upgrade to " + where + " timed out");
      continue;
    }
    return status(errc::io_error, "sending the WebSocket upgrade to " + where + ": " + errno_text(errno));
  }

  upgrade_response resp;
  http_parser parser;
  http_parser_init(&parser, HTTP_RESPONSE);
  parser.data = &resp;
  http_parser_settings settings;
  http_parser_settings_init(&settings);
  settings.on_header_field = on_header_field;
  settings.on_header_value = on_header_value;
  settings.on_headers_complete = on_headers_complete;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;

  std::size_t total = 0;
  char buf[4096];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    int pr = ::poll(&p, 1, remaining_ms(deadline));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) return status(errc::timeout, "the gateway at " + where + " did not answer the WebSocket upgrade in time");
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return status(errc::io_error, "reading the WebSocket upgrade from " + where + ": " + errno_text(errno));
    // EOF: let the parser see the end (a response without Content-Length ends there).
    std::size_t parsed = http_parser_execute(&parser, &settings, buf, static_cast<std::size_t>(n));
    total += static_cast<std::size_t>(n);
    if (HTTP_PARSER_ERRNO(&parser) != HPE_OK && !(parser.upgrade && resp.headers_done))
      return status(errc::corrupt, "the gateway at " + where + " sent an invalid HTTP response to the upgrade: " +
                                       http_errno_description(HTTP_PARSER_ERRNO(&parser)));
    if (resp.headers_done && parser.status_code == 101) {
      pending_.assign(buf + parsed, static_cast<std::size_t>(n) - parsed);
      break;
    }
    if (resp.message_done || n == 0) {
      if (!resp.headers_done)
        return status(errc::io_error, "the gateway at " + where + " closed the connection during the WebSocket upgrade");
      std::string body = resp.body.empty() ? "" : ": " + resp.body;
      return status(errc::unsupported, "the gateway at " + where + " refused the WebSocket upgrade with HTTP " +
                                           std::to_string(parser.status_code) + body);
    }
    if (total > kMaxUpgradeResponse)
      return status(errc::limit_exceeded, "the upgrade response from " + where + " is over 64 KiB");
  }
  for (auto& [k, v] : resp.headers) k = ascii_lower(k);
  headers_ = std::move(resp.headers);
  const std::string* accept = header(headers_, "sec-websocket-accept");
  if (!accept || *accept != accept_for(key))
    return status(errc::corrupt, "the gateway at " + where + " answered the upgrade without a valid Sec-WebSocket-Accept");
  return status::success();
}

ws_client::~ws_client() {
  if (ctx_) wslay_event_context_free(as_ctx(ctx_));
  if (fd_ >= 0) ::close(fd_);
}

bool ws_client::is_open() const {
  return fd_ >= 0 && ctx_ && !close_code_ && !peer_eof_ && io_error_.empty() &&
         wslay_event_get_read_enabled(as_ctx(ctx_));
}

std::optional<std::uint16_t> ws_client::close_code() const { return close_code_; }

status ws_client::connection_closed_error() const {
  if (close_code_) {
    std::string r = close_reason_.empty() ? "" : ": " + close_reason_;
    return status(errc::io_error, "the gateway closed the connection (code " + std::to_string(*close_code_) + r + ")");
  }
  if (!io_error_.empty()) return status(errc::io_error, io_error_);
  return status(errc::io_error, "the gateway closed the connection without a close frame");
}

result<bool> ws_client::pump(steady::time_point deadline, bool want_read) {
  auto* ctx = as_ctx(ctx_);
  if (!pending_.empty() && want_read) {
    if (wslay_event_recv(ctx) != 0) return connection_closed_error();
    return true;
  }
  short events = 0;
  if (want_read && wslay_event_want_read(ctx)) events |= POLLIN;
  if (wslay_event_want_write(ctx)) events |= POLLOUT;
  if (events == 0) return connection_closed_error();
  pollfd p{fd_, events, 0};
  int pr = ::poll(&p, 1, remaining_ms(deadline));
  if (pr < 0 && errno == EINTR) return true;
  if (pr < 0) return status(errc::io_error, "waiting on the gateway socket: " + errno_text(errno));
  if (pr == 0) return false;
  if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
    if (wslay_event_recv(ctx) != 0) return connection_closed_error();
  }
  if (p.revents & POLLOUT || wslay_event_want_write(ctx)) {
    if (wslay_event_send(ctx) != 0) return connection_closed_error();
  }
  return true;
}

status ws_client::send_message(std::uint8_t opcode, std::string_view data, std::chrono::milliseconds timeout) {
  if (!ctx_ || fd_ < 0) return status(errc::io_error, "the gateway connection is closed");
  auto* ctx = as_ctx(ctx_);
  wslay_event_msg msg{opcode, reinterpret_cast<const uint8_t*>(data.data()), data.size()};
  if (wslay_event_queue_msg(ctx, &msg) != 0) return connection_closed_error();
  auto deadline = steady::now() + timeout;
  if (wslay_event_send(ctx) != 0) return connection_closed_error();
  while (wslay_event_want_write(ctx)) {
    // Keep reading too, so a server that writes while we write cannot deadlock us.
    auto r = pump(deadline, true);
    if (!r) return r.error();
    if (!*r) return status(errc::timeout, "sending to the gateway timed out (the socket did not drain)");
  }
  return status::success();
}

status ws_client::send_text(std::string_view text, std::chrono::milliseconds timeout) {
  return send_message(WSLAY_TEXT_FRAME, text, timeout);
}
status ws_client::send_binary(std::string_view data, std::chrono::milliseconds timeout) {
  return send_message(WSLAY_BINARY_FRAME, data, timeout);
}

result<std::string> ws_client::receive_text(std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  for (;;) {
    if (!inbox_.empty()) {
      auto [op, data] = std::move(inbox_.front());
      inbox_.pop_front();
      if (op != WSLAY_TEXT_FRAME)
        return status(errc::corrupt, "the gateway sent a binary message of " + std::to_string(data.size()) + " bytes");
      return std::move(data);
    }
    if (!ctx_ || fd_ < 0) return status(errc::io_error, "the gateway connection is closed");
    if (close_code_ || peer_eof_ || !io_error_.empty()) {
      // Echo the close frame wslay queued, best effort, then report.
      if (wslay_event_want_write(as_ctx(ctx_))) (void)wslay_event_send(as_ctx(ctx_));
      return connection_closed_error();
    }
    auto r = pump(deadline, true);
    if (!r) {
      if (!inbox_.empty()) continue;  // messages that arrived just before the close come first
      return r.error();
    }
    if (!*r && inbox_.empty()) return status(errc::timeout, "no message from the gateway within " +
                                                                std::to_string(timeout.count()) + " ms");
  }
}

status ws_client::close(std::uint16_t code, std::string_view reason, std::chrono::milliseconds timeout) {
  if (!ctx_ || fd_ < 0) return status::success();
  auto* ctx = as_ctx(ctx_);
  auto deadline = steady::now() + timeout;
  std::string_view r = reason.substr(0, 122);
  if (!wslay_event_get_close_sent(ctx)) {
    if (wslay_event_queue_close(ctx, code, reinterpret_cast<const uint8_t*>(r.data()), r.size()) != 0 &&
        !close_code_)
      return status(errc::io_error, "cannot queue the close frame");
  }
  while (!close_code_ && !peer_eof_ && io_error_.empty()) {
    auto p = pump(deadline, true);
    if (!p || !*p) break;
  }
  if (wslay_event_want_write(ctx)) (void)wslay_event_send(ctx);
  ::shutdown(fd_, SHUT_RDWR);
  return status::success();
}

void ws_client::abort() {
  if (fd_ < 0) return;
  linger l{1, 0};  // RST instead of FIN: the peer sees the connection torn down
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace sessionrt::gateway
