// tcp_proxy: a loopback TCP proxy (to etcd, in the harness) that can be paused. While paused it
// reads nothing and accepts nothing, so the bytes of both sides wait: a partition as the node
// behind it sees it (its requests time out), without touching the node or etcd. One thread
// polls every 20 ms, which only bounds how soon a pause, a resume or the end is noticed.
#pragma once
#include <atomic>
#include <map>
#include <string>
#include <thread>

namespace sessionrt::testing {

class tcp_proxy {
 public:
  explicit tcp_proxy(int upstream_port);
  ~tcp_proxy();
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void pause(bool p) { paused_ = p; }

 private:
  int connect_upstream();
  void drop(int fd);
  void loop();

  int upstream_;
  int listen_ = -1;
  int port_ = -1;
  std::map<int, int> peer_;
  std::atomic<bool> paused_{false}, stop_{false};
  std::thread thread_;
};

}  // namespace sessionrt::testing
