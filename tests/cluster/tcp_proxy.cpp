#include "tests/cluster/tcp_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace sessionrt::testing {

tcp_proxy::tcp_proxy(int upstream_port) : upstream_(upstream_port) {
  listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(listen_, 64) == 0 &&
      ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { loop(); });
}

tcp_proxy::~tcp_proxy() {
  stop_ = true;
  thread_.join();
  for (auto& [a, b] : peer_) ::close(a);
  ::close(listen_);
}

int tcp_proxy::connect_upstream() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(upstream_));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void tcp_proxy::drop(int fd) {
  auto it = peer_.find(fd);
  if (it == peer_.end()) return;
  const int other = it->second;
  peer_.erase(fd);
  peer_.erase(other);
  ::close(fd);
  ::close(other);
}

void tcp_proxy::loop() {
  while (!stop_) {
    std::vector<pollfd> fds;
    if (!paused_) {
      fds.push_back({listen_, POLLIN, 0});
      for (auto& [fd, other] : peer_) fds.push_back({fd, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 20);
    for (const auto& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == listen_) {
        const int client = ::accept(listen_, nullptr, nullptr);
        const int up = client >= 0 ? connect_upstream() : -1;
        if (up < 0) {
          if (client >= 0) ::close(client);
          continue;
        }
        peer_[client] = up;
        peer_[up] = client;
        continue;
      }
      if (!peer_.count(p.fd)) continue;
      char buf[65536];
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        drop(p.fd);
        continue;
      }
      const int to = peer_[p.fd];
      for (ssize_t off = 0; off < n;) {
        const ssize_t w = ::write(to, buf + off, static_cast<std::size_t>(n - off));
        if (w <= 0) break;
        off += w;
      }
    }
  }
}

}  // namespace sessionrt::testing
