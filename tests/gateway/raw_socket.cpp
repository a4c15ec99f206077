#include "tests/gateway/raw_socket.hpp"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>

#include "gateway/client_protocol.hpp"

namespace sessionrt::gateway::testing {

std::uint16_t wire_frame::close_code() const {
  if (payload.size() < 2) return 1005;
  return static_cast<std::uint16_t>((static_cast<unsigned char>(payload[0]) << 8) | static_cast<unsigned char>(payload[1]));
}

raw_socket::raw_socket(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) FAIL("cannot connect to port " << port);
}

raw_socket::~raw_socket() {
  if (fd_ >= 0) ::close(fd_);
}

bool raw_socket::send_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) reset_ = true;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool raw_socket::read_some(std::chrono::milliseconds timeout) {
  if (eof_) return false;
  pollfd p{fd_, POLLIN, 0};
  const int r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (r <= 0) return false;
  char buf[65536];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    if (n < 0 && errno == ECONNRESET) reset_ = true;
    eof_ = true;
    return false;
  }
  in_.append(buf, static_cast<std::size_t>(n));
  return true;
}

bool raw_socket::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!eof_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    (void)read_some(left);
  }
  return true;
}

bool raw_socket::read_until(std::string_view needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (in_.find(needle) == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !read_some(left)) return false;
  }
  return true;
}

bool raw_socket::upgrade(std::chrono::milliseconds timeout) {
  if (!send_all("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"))
    return false;
  if (!read_until("\r\n\r\n", timeout) || in_.rfind("HTTP/1.1 101", 0) != 0) return false;
  in_.erase(0, in_.find("\r\n\r\n") + 4);
  return true;
}

std::optional<wire_frame> raw_socket::next_frame(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (in_.size() >= 2) {
      const auto b0 = static_cast<unsigned char>(in_[0]), b1 = static_cast<unsigned char>(in_[1]);
      std::uint64_t len = b1 & 0x7fu;
      std::size_t head = 2;
      if (len == 126 && in_.size() >= 4) {
        len = (static_cast<std::uint64_t>(static_cast<unsigned char>(in_[2])) << 8) | static_cast<unsigned char>(in_[3]);
        head = 4;
      } else if (len == 127 && in_.size() >= 10) {
        len = 0;
        for (int i = 2; i < 10; ++i) len = (len << 8) | static_cast<unsigned char>(in_[static_cast<std::size_t>(i)]);
        head = 10;
      }
      const bool head_complete = (b1 & 0x7fu) < 126 || head > 2;
      if (head_complete && in_.size() >= head + len) {
        wire_frame f;
        f.opcode = b0 & 0x0fu;
        f.fin = (b0 & 0x80u) != 0;
        f.payload = in_.substr(head, static_cast<std::size_t>(len));
        in_.erase(0, head + static_cast<std::size_t>(len));
        return f;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !read_some(left)) return std::nullopt;
  }
}

std::string client_frame_header(std::uint8_t opcode, std::uint64_t payload_length, bool fin) {
  std::string out;
  out += static_cast<char>((fin ? 0x80 : 0x00) | (opcode & 0x0f));
  if (payload_length < 126) {
    out += static_cast<char>(0x80 | payload_length);
  } else if (payload_length < 65536) {
    out += static_cast<char>(0x80 | 126);
    out += static_cast<char>((payload_length >> 8) & 0xff);
    out += static_cast<char>(payload_length & 0xff);
  } else {
    out += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i) out += static_cast<char>((payload_length >> (8 * i)) & 0xff);
  }
  out.append(4, '\0');  // the mask key: zero, so the payload goes as it is
  return out;
}

std::string client_frame(std::uint8_t opcode, std::string_view payload, bool fin) {
  std::string out = client_frame_header(opcode, payload.size(), fin);
  out.append(payload);
  return out;
}

std::string connect_request(const std::string& token) {
  client_identity who;
  who.token = token;
  who.client_id = "cli";
  who.scopes = {"operator.admin"};
  return boost::json::serialize(
      boost::json::object{{"type", "req"}, {"id", "c"}, {"method", "connect"}, {"params", connect_params(who)}});
}

}  // namespace sessionrt::gateway::testing
