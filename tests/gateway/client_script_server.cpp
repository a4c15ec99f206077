#include "tests/gateway/client_script_server.hpp"

#include <arpa/inet.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wslay/wslay.h>

#include <cerrno>
#include <cstring>

namespace sessionrt::gateway::testing {
namespace {
using steady = std::chrono::steady_clock;

int ms_until(steady::time_point d) {
  auto l = std::chrono::duration_cast<std::chrono::milliseconds>(d - steady::now()).count();
  return l < 0 ? 0 : static_cast<int>(l);
}

std::string accept_key(const std::string& key) {
  std::string in = key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(in.data(), in.size(), md, &n, EVP_sha1(), nullptr);
  std::string out(4 * ((n + 2) / 3), '\0');
  out.resize(static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), md, static_cast<int>(n))));
  return out;
}

struct request_state {
  std::vector<std::pair<std::string, std::string>> headers;
  bool in_value = false;
  bool done = false;
};
}  // namespace

struct script_socket::io {
  static ssize_t recv_cb(wslay_event_context_ptr ctx, uint8_t* buf, size_t len, int, void* u) {
    auto* s = static_cast<script_socket*>(u);
    ssize_t r = ::recv(s->fd_, buf, len, MSG_DONTWAIT);
    if (r > 0) return r;
    if (r == 0) s->eof_ = true;
    wslay_event_set_error(ctx, r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? WSLAY_ERR_WOULDBLOCK
                                                                                   : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  static ssize_t send_cb(wslay_event_context_ptr ctx, const uint8_t* d, size_t len, int, void* u) {
    auto* s = static_cast<script_socket*>(u);
    ssize_t r = ::send(s->fd_, d, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r >= 0) return r;
    wslay_event_set_error(ctx, errno == EAGAIN || errno == EWOULDBLOCK ? WSLAY_ERR_WOULDBLOCK
                                                                       : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  static void on_msg(wslay_event_context_ptr, const wslay_event_on_msg_recv_arg* a, void* u) {
    auto* s = static_cast<script_socket*>(u);
    if (a->opcode == WSLAY_TEXT_FRAME) s->inbox_.emplace_back(reinterpret_cast<const char*>(a->msg), a->msg_length);
    if (a->opcode == WSLAY_CONNECTION_CLOSE) s->client_close_ = a->status_code;
  }
};

script_socket::script_socket(int fd) : fd_(fd) {
  wslay_event_callbacks cbs{io::recv_cb, io::send_cb, nullptr, nullptr, nullptr, nullptr, io::on_msg};
  wslay_event_context_ptr ctx = nullptr;
  wslay_event_context_server_init(&ctx, &cbs, this);
  ctx_ = ctx;
}

script_socket::~script_socket() {
  wslay_event_context_free(static_cast<wslay_event_context_ptr>(ctx_));
  ::close(fd_);
}

bool script_socket::pump(steady::time_point deadline) {
  auto* ctx = static_cast<wslay_event_context_ptr>(ctx_);
  short ev = POLLIN;
  if (wslay_event_want_write(ctx)) ev |= POLLOUT;
  pollfd p{fd_, ev, 0};
  if (::poll(&p, 1, ms_until(deadline)) <= 0) return false;
  if ((p.revents & (POLLIN | POLLHUP | POLLERR)) && wslay_event_recv(ctx) != 0) return false;
  if (wslay_event_want_write(ctx) && wslay_event_send(ctx) != 0) return false;
  return !eof_;
}

void script_socket::send_text(const std::string& text) {
  auto* ctx = static_cast<wslay_event_context_ptr>(ctx_);
  wslay_event_msg m{WSLAY_TEXT_FRAME, reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  wslay_event_queue_msg(ctx, &m);
  auto deadline = steady::now() + std::chrono::seconds(10);
  while (wslay_event_want_write(ctx) && steady::now() < deadline) {
    if (wslay_event_send(ctx) != 0) return;
    if (!wslay_event_want_write(ctx)) break;
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, ms_until(deadline));
  }
}

std::optional<std::string> script_socket::receive_text(std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  while (inbox_.empty()) {
    if (client_close_ || eof_ || !pump(deadline)) {
      if (inbox_.empty()) return std::nullopt;
    }
  }
  std::string s = std::move(inbox_.front());
  inbox_.erase(inbox_.begin());
  return s;
}

void script_socket::close(std::uint16_t code, const std::string& reason) {
  auto* ctx = static_cast<wslay_event_context_ptr>(ctx_);
  wslay_event_queue_close(ctx, code, reinterpret_cast<const uint8_t*>(reason.data()), reason.size());
  auto deadline = steady::now() + std::chrono::seconds(5);
  while (!client_close_ && !eof_ && pump(deadline)) {
  }
  ::shutdown(fd_, SHUT_RDWR);
}

script_server::script_server(script s) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(listen_fd_, 4);
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this, s = std::move(s)] {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20000) <= 0) {
      failure_ = "no client connected";
      return;
    }
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    request_state st;
    http_parser parser;
    http_parser_init(&parser, HTTP_REQUEST);
    parser.data = &st;
    http_parser_settings set;
    http_parser_settings_init(&set);
    set.on_header_field = [](http_parser* hp, const char* at, size_t n) {
      auto* r = static_cast<request_state*>(hp->data);
      if (r->headers.empty() || r->in_value) r->headers.emplace_back();
      r->in_value = false;
      r->headers.back().first.append(at, n);
      return 0;
    };
    set.on_header_value = [](http_parser* hp, const char* at, size_t n) {
      auto* r = static_cast<request_state*>(hp->data);
      r->in_value = true;
      r->headers.back().second.append(at, n);
      return 0;
    };
    set.on_headers_complete = [](http_parser* hp) {
      static_cast<request_state*>(hp->data)->done = true;
      return 0;
    };
    char buf[4096];
    while (!st.done) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        failure_ = "upgrade request not complete";
        ::close(fd);
        return;
      }
      http_parser_execute(&parser, &set, buf, static_cast<size_t>(n));
    }
    std::string key;
    std::vector<std::string> lines;
    for (auto& [k, v] : st.headers) {
      lines.push_back(k + ": " + v);
      if (strcasecmp(k.c_str(), "Sec-WebSocket-Key") == 0) key = v;
    }
    std::string resp = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       "Sec-WebSocket-Accept: " + accept_key(key) + "\r\n\r\n";
    ::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL);
    script_socket sock(fd);
    sock.request_lines = std::move(lines);
    s(sock);
  });
}

void script_server::join() {
  if (thread_.joinable()) thread_.join();
}

script_server::~script_server() {
  join();
  ::close(listen_fd_);
}

}  // namespace sessionrt::gateway::testing
