// client_script_server: a one-connection WebSocket server for the client's tests. It accepts
// one TCP connection on 127.0.0.1 (ephemeral port), answers the upgrade (http_parser + OpenSSL
// accept key), then runs the test's script on its own thread with a script_socket (wslay
// server framing). The script only records what it received; the test thread asserts after
// join() (Catch2 assertions are not thread-safe).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sessionrt::gateway::testing {

class script_socket {
 public:
  explicit script_socket(int fd);
  ~script_socket();
  void send_text(const std::string& text);
  // The next text message, or nullopt on timeout / close.
  std::optional<std::string> receive_text(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // A close frame with code and reason, then waits briefly for the client's.
  void close(std::uint16_t code, const std::string& reason);
  // Whether the client sent a close frame, and its code.
  std::optional<std::uint16_t> client_close_code() const { return client_close_; }
  std::vector<std::string> request_lines;  // the upgrade request's header lines

  struct io;

 private:
  bool pump(std::chrono::steady_clock::time_point deadline);
  int fd_;
  void* ctx_ = nullptr;
  std::vector<std::string> inbox_;
  std::optional<std::uint16_t> client_close_;
  bool eof_ = false;
};

class script_server {
 public:
  using script = std::function<void(script_socket&)>;
  explicit script_server(script s);
  ~script_server();
  std::uint16_t port() const { return port_; }
  void join();
  // Set when the upgrade failed on the server side.
  const std::string& failure() const { return failure_; }

 private:
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::string failure_;
};

}  // namespace sessionrt::gateway::testing
