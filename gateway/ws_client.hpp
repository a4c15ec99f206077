// ws_client: a small blocking WebSocket client over one TCP socket (RFC 6455, client side).
// - The HTTP upgrade response is parsed by libhttp-parser and the framing (masking, control
//   frames, fragmentation, the close handshake) is libwslay's; nothing of either is hand-written.
// - One thread at a time: every call blocks at most its timeout. Pings are answered and the
//   server's close frame is echoed while receive_text() or send_text() runs.
// - receive_text() returns the next whole text message; errc::timeout when none arrived in
//   time (the connection stays usable), errc::io_error once the connection is closed (the close
//   code and reason the server sent stay readable through close_code() / close_reason()).
// - The caller owns the object; destroying it closes the socket without a close frame.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "messages/status.hpp"

namespace sessionrt::gateway {

struct ws_connect_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string path = "/";
  std::chrono::milliseconds timeout{5000};  // TCP connect + upgrade together
  // Extra request headers (e.g. an Origin), sent as given.
  std::vector<std::pair<std::string, std::string>> headers;
  // A message from the server larger than this fails the connection (close 1009).
  std::size_t max_message_bytes = 64u << 20;
};

class ws_client {
 public:
  static result<std::unique_ptr<ws_client>> connect(const ws_connect_options& options);
  static result<std::unique_ptr<ws_client>> connect(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout);
  // Whether host:port accepts a TCP connection within `timeout` (closed again at once).
  static bool port_answers(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout);
  ~ws_client();
  ws_client(const ws_client&) = delete;
  ws_client& operator=(const ws_client&) = delete;

  // Queues one text (or binary) message and blocks until the socket took all of it.
  status send_text(std::string_view text, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  status send_binary(std::string_view data, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next text message. A binary message from the server is an errc::corrupt error.
  result<std::string> receive_text(std::chrono::milliseconds timeout);
  // Sends a close frame with `code` and waits (at most `timeout`) for the server's close frame.
  status close(std::uint16_t code = 1000, std::string_view reason = {},
               std::chrono::milliseconds timeout = std::chrono::seconds(2));
  // Drops the TCP connection at once, no close frame (a client killed mid-request).
  void abort();

  // Whether messages can still be received (no close frame seen, socket not failed).
  bool is_open() const;
  // The close code the server sent (1005 when its close frame had none), once one arrived.
  std::optional<std::uint16_t> close_code() const;
  const std::string& close_reason() const { return close_reason_; }
  // Response headers of the upgrade, names lower-cased.
  const std::vector<std::pair<std::string, std::string>>& upgrade_headers() const { return headers_; }
  int native_handle() const { return fd_; }

  // Internal: wslay's callbacks reach these.
  struct io;

 private:
  ws_client() = default;
  status handshake(const ws_connect_options& options, std::chrono::steady_clock::time_point deadline);
  status send_message(std::uint8_t opcode, std::string_view data, std::chrono::milliseconds timeout);
  // One round of poll + wslay recv/send, waiting until `deadline`; false on timeout.
  result<bool> pump(std::chrono::steady_clock::time_point deadline, bool want_read);
  status connection_closed_error() const;

  int fd_ = -1;
  void* ctx_ = nullptr;  // wslay_event_context_ptr
  std::string pending_;  // bytes read past the upgrade response, fed to wslay first
  std::deque<std::pair<std::uint8_t, std::string>> inbox_;
  std::vector<std::pair<std::string, std::string>> headers_;
  std::optional<std::uint16_t> close_code_;
  std::string close_reason_;
  std::string io_error_;  // the socket error that ended the connection, if any
  bool peer_eof_ = false;
};

}  // namespace sessionrt::gateway
