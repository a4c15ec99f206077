#include "tests/providers/loopback_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <stdexcept>

namespace sessionrt::testing {
namespace {

using steady = std::chrono::steady_clock;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Overloaded";
    default: return "Status";
  }
}

std::string hex(std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[n % 16]);
    n /= 16;
  } while (n != 0);
  return out;
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("loopback_server: " + what + ": " + std::strerror(errno));
}

sockaddr_in loopback_addr(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

}  // namespace

std::string recorded_request::header(std::string_view name) const {
  const std::string key = lower(name);
  for (const auto& [n, v] : headers) {
    if (n == key) return v;
  }
  return {};
}

scripted_response scripted_response::text(int status, std::string body) {
  scripted_response r;
  r.status = status;
  if (!body.empty()) r.body.push_back({std::move(body), 0});
  return r;
}

scripted_response scripted_response::stream(int status, std::vector<std::string> pieces, int delay_ms) {
  scripted_response r;
  r.status = status;
  for (std::size_t i = 0; i < pieces.size(); ++i) r.body.push_back({std::move(pieces[i]), i == 0 ? 0 : delay_ms});
  return r;
}

scripted_response scripted_response::silent() {
  scripted_response r;
  r.send_head = false;
  r.end = ending::stall;
  return r;
}

scripted_response scripted_response::reset_at_once() {
  scripted_response r;
  r.send_head = false;
  r.end = ending::reset;
  return r;
}

scripted_response& scripted_response::with_header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

scripted_response& scripted_response::ending_with(ending e) {
  end = e;
  return *this;
}

scripted_response& scripted_response::held() {
  hold = true;
  return *this;
}

// One accepted connection (server thread only).
struct loopback_server::conn {
  struct out {
    std::string bytes;
    int delay_ms = 0;
  };
  enum class phase : std::uint8_t { reading, responding, stalled, dead };

  int fd = -1;
  phase state = phase::reading;
  std::string in;                   // bytes received, not yet parsed
  bool sent_continue = false;       // "100 Continue" for the request being read
  std::deque<out> outq;             // the response's remaining pieces
  std::size_t sent = 0;             // of outq.front()
  bool armed = false;               // outq.front()'s delay started
  steady::time_point due;           // when outq.front() may go
  bool held = false;
  scripted_response::ending end = scripted_response::ending::complete;
  bool close_after = false;         // the request said "Connection: close"
};

loopback_server::loopback_server(std::vector<scripted_response> script)
    : loopback_server(std::move(script), options{}) {}

loopback_server::loopback_server(std::vector<scripted_response> script, options opt)
    : loopback_server(
          [script = std::move(script)](const recorded_request&, std::size_t index) {
            if (script.empty()) return scripted_response::text(200, "ok");
            return script[std::min(index, script.size() - 1)];
          },
          opt) {}

loopback_server::loopback_server(responder respond) : loopback_server(std::move(respond), options{}) {}

loopback_server::loopback_server(responder respond, options opt) : respond_(std::move(respond)), opt_(opt) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("socket");
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = loopback_addr(0);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
  // A backlog of 0 holds one connection: the queue is easy to fill for connect timeouts.
  if (listen(listen_fd_, opt_.accept ? 1024 : 0) != 0) fail("listen");
  socklen_t len = sizeof addr;
  if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail("getsockname");
  port_ = ntohs(addr.sin_port);
  set_nonblocking(listen_fd_);
  if (pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) fail("pipe2");
  if (!opt_.accept) saturate_backlog();
  thread_ = std::thread([this] { run(); });
}

loopback_server::~loopback_server() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake();
  thread_.join();
  for (auto& c : conns_) {
    if (c->fd >= 0) ::close(c->fd);
  }
  for (int fd : fillers_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
}

// Connects until one connection stays pending: the kernel then drops every further SYN.
void loopback_server::saturate_backlog() {
  const sockaddr_in addr = loopback_addr(port_);
  for (int i = 0; i < 16; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    fillers_.push_back(fd);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) continue;
    if (errno != EINPROGRESS) fail("connect");
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 500) == 0) return;  // still in SYN_SENT: the queue is full
  }
  throw std::runtime_error("loopback_server: could not fill the accept queue");
}

std::string loopback_server::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

std::vector<recorded_request> loopback_server::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

loopback_server::stats loopback_server::snapshot() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool loopback_server::wait_for(const std::function<bool(const stats&)>& pred, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return pred(stats_); });
}

bool loopback_server::wait_for_requests(std::size_t n, std::chrono::milliseconds timeout) const {
  return wait_for([n](const stats& s) { return s.requests >= n; }, timeout);
}

bool loopback_server::wait_for_client_aborts(std::size_t n, std::chrono::milliseconds timeout) const {
  return wait_for([n](const stats& s) { return s.client_aborts >= n; }, timeout);
}

void loopback_server::release() {
  {
    std::lock_guard lock(mu_);
    released_ = true;
  }
  wake();
}

void loopback_server::wake() {
  const char byte = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_pipe_[1], &byte, 1);  // a full pipe is awake already
}

void loopback_server::run() {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    poll_once();
    std::erase_if(conns_, [](const std::unique_ptr<conn>& c) { return c->state == conn::phase::dead; });
  }
}

void loopback_server::poll_once() {
  bool released = false;
  {
    std::lock_guard lock(mu_);
    released = released_;
  }
  const auto now = steady::now();
  int timeout_ms = -1;
  std::vector<pollfd> fds;
  fds.push_back({wake_pipe_[0], POLLIN, 0});
  if (opt_.accept) fds.push_back({listen_fd_, POLLIN, 0});
  const std::size_t first_conn = fds.size();
  for (auto& c : conns_) {
    if (released) c->held = false;
    short events = POLLIN;  // also while responding: a client close must be seen at once
    if (c->state == conn::phase::responding && !c->held && !c->outq.empty()) {
      if (!c->armed) {
        c->armed = true;
        c->due = now + std::chrono::milliseconds(c->outq.front().delay_ms);
      }
      if (c->due <= now) {
        events |= POLLOUT;
      } else {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(c->due - now).count();
        timeout_ms = timeout_ms < 0 ? static_cast<int>(wait) : std::min(timeout_ms, static_cast<int>(wait));
      }
    }
    fds.push_back({c->fd, events, 0});
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) < 0) return;  // EINTR: next round
  if (fds[0].revents & POLLIN) {
    char buf[64];
    while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
    }
  }
  if (opt_.accept && (fds[1].revents & POLLIN)) accept_all();
  // conns_ may have grown in accept_all(); only the polled ones have results.
  for (std::size_t i = first_conn; i < fds.size(); ++i) {
    conn& c = *conns_[i - first_conn];
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) on_readable(c);
    if (c.state == conn::phase::responding) pump(c);
  }
}

void loopback_server::accept_all() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<conn>();
    c->fd = fd;
    conns_.push_back(std::move(c));
    std::lock_guard lock(mu_);
    ++stats_.connections;
  }
}

void loopback_server::on_readable(conn& c) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    client_closed(c);  // 0: FIN; ECONNRESET and friends: RST
    return;
  }
  if (c.state == conn::phase::reading) parse_requests(c);
}

void loopback_server::client_closed(conn& c) {
  const bool mid_response = c.state == conn::phase::responding || c.state == conn::phase::stalled ||
                            (c.state == conn::phase::reading && !c.in.empty());
  ::close(c.fd);
  c.fd = -1;
  c.state = conn::phase::dead;
  {
    std::lock_guard lock(mu_);
    ++stats_.client_closes;
    if (mid_response) ++stats_.client_aborts;
  }
  cv_.notify_all();
}

void loopback_server::close_conn(conn& c, bool reset) {
  if (reset) {
    linger l{1, 0};
    setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }
  ::close(c.fd);
  c.fd = -1;
  c.state = conn::phase::dead;
}

// Takes every complete request off the input (one at a time: the next waits for the response).
void loopback_server::parse_requests(conn& c) {
  const auto head_end = c.in.find("\r\n\r\n");
  if (head_end == std::string::npos) return;
  recorded_request req;
  std::string_view head(c.in.data(), head_end);
  const auto line_end = head.find("\r\n");
  const std::string_view request_line = head.substr(0, line_end);
  const auto sp1 = request_line.find(' ');
  const auto sp2 = request_line.find(' ', sp1 + 1);
  req.method = std::string(request_line.substr(0, sp1));
  req.path = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::size_t content_length = 0;
  std::string_view rest = line_end == std::string_view::npos ? std::string_view{} : head.substr(line_end + 2);
  while (!rest.empty()) {
    const auto eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    req.headers.emplace_back(lower(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
    if (req.headers.back().first == "content-length") content_length = std::stoul(req.headers.back().second);
  }
  const std::size_t body_start = head_end + 4;
  if (c.in.size() < body_start + content_length) {
    if (!c.sent_continue && lower(req.header("expect")) == "100-continue") {
      c.sent_continue = true;
      c.outq.push_back({"HTTP/1.1 100 Continue\r\n\r\n", 0});
      c.state = conn::phase::responding;  // sends it, then reads on (see finish_response)
      c.end = scripted_response::ending::complete;
    }
    return;
  }
  req.body = c.in.substr(body_start, content_length);
  c.in.erase(0, body_start + content_length);
  c.sent_continue = false;
  c.close_after = lower(req.header("connection")) == "close";
  std::size_t index = 0;
  {
    std::lock_guard lock(mu_);
    index = requests_.size();
    requests_.push_back(req);
    ++stats_.requests;
  }
  cv_.notify_all();
  respond(c, req, index);
}

void loopback_server::respond(conn& c, const recorded_request& request, std::size_t index) {
  scripted_response r = respond_(request, index);
  {
    std::lock_guard lock(mu_);
    c.held = r.hold && !released_;
  }
  c.outq.clear();
  c.sent = 0;
  c.armed = false;
  c.end = r.end;
  c.state = conn::phase::responding;
  if (!r.send_head) return;
  if (!r.preamble.empty()) c.outq.push_back({r.preamble, 0});
  std::size_t total = 0;
  for (const auto& p : r.body) total += p.bytes.size();
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
  if (r.chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else {
    head += "Content-Length: " + std::to_string(total + (r.end == scripted_response::ending::complete ? 0 : 1)) + "\r\n";
  }
  head += "\r\n";
  c.outq.push_back({std::move(head), r.head_delay_ms});
  for (auto& p : r.body) {
    if (r.chunked && !p.bytes.empty()) {
      c.outq.push_back({hex(p.bytes.size()) + "\r\n" + p.bytes + "\r\n", p.delay_ms});
    } else {
      c.outq.push_back({std::move(p.bytes), p.delay_ms});
    }
  }
  if (r.chunked && r.end == scripted_response::ending::complete) c.outq.push_back({"0\r\n\r\n", 0});
}

// Sends what is due; at the end of the pieces applies the ending.
void loopback_server::pump(conn& c) {
  const auto now = steady::now();
  while (!c.outq.empty()) {
    if (c.held) return;
    if (!c.armed) {
      c.armed = true;
      c.due = now + std::chrono::milliseconds(c.outq.front().delay_ms);
    }
    if (c.due > now) return;
    const std::string& bytes = c.outq.front().bytes;
    while (c.sent < bytes.size()) {
      const ssize_t n = ::send(c.fd, bytes.data() + c.sent, bytes.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      client_closed(c);  // EPIPE / ECONNRESET
      return;
    }
    c.outq.pop_front();
    c.sent = 0;
    c.armed = false;
  }
  finish_response(c);
}

void loopback_server::finish_response(conn& c) {
  switch (c.end) {
    case scripted_response::ending::complete:
      if (c.close_after) {
        close_conn(c, false);
        return;
      }
      c.state = conn::phase::reading;
      parse_requests(c);  // a request already waiting (or the body after a 100 Continue)
      return;
    case scripted_response::ending::stall:
      c.state = conn::phase::stalled;
      return;
    case scripted_response::ending::close:
      close_conn(c, false);
      return;
    case scripted_response::ending::reset:
      close_conn(c, true);
      return;
  }
}

}  // namespace sessionrt::testing
